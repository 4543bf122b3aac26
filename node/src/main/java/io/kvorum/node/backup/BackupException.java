package io.kvorum.node.backup;

import io.kvorum.node.error.RequestException;

/** Why a backup request was refused (docs/http-api.md); each reason is one HTTP status. */
public final class BackupException extends RequestException {

    public enum Reason {
        /** Another backup, or a membership change, is in progress: 409. */
        IN_PROGRESS(Code.CHANGE_IN_PROGRESS),
        /** A member is unreachable: 503. */
        UNAVAILABLE(Code.MEMBER_UNREACHABLE),
        /** No member knows the backup: 404. */
        NOT_FOUND(Code.NOT_FOUND),
        /** Not a backup id, or not prepared: 400. */
        INVALID(Code.BAD_REQUEST);

        private final Code code;

        Reason(Code code) {
            this.code = code;
        }
    }

    private final Reason reason;

    public BackupException(Reason reason, String message) {
        super(reason.code, message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
