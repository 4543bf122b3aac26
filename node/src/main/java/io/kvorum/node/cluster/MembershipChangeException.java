package io.kvorum.node.cluster;

import io.kvorum.node.error.RequestException;

/** Why a membership change was refused (docs/operations.md#growing-and-shrinking-a-cluster); each reason is one HTTP status. */
public final class MembershipChangeException extends RequestException {

    public enum Reason {
        /** Another change is in progress: 409. */
        IN_PROGRESS(Code.CHANGE_IN_PROGRESS),
        /** A member needed for the change is unreachable: 503. */
        UNAVAILABLE(Code.MEMBER_UNREACHABLE),
        /** The change cannot be made (not a member, already a member, the last member): 400. */
        INVALID(Code.BAD_REQUEST);

        private final Code code;

        Reason(Code code) {
            this.code = code;
        }
    }

    private final Reason reason;

    public MembershipChangeException(Reason reason, String message) {
        super(reason.code, message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
