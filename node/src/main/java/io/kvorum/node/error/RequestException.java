package io.kvorum.node.error;

/**
 * A request failed for a reason the client is told about: the one error type the core raises for
 * that, with a {@link Code} that the HTTP layer maps to a status with one switch (Ambry's error
 * codes are the model). Anything else that fails a request is unexpected and answers 500.
 */
public abstract class RequestException extends RuntimeException {

    /** Why a request failed, as the client sees it. */
    public enum Code {
        /** The request is malformed (HTTP 400). */
        BAD_REQUEST,
        /** Fewer than {@code ack} replicas answered in time (HTTP 504). */
        NOT_ENOUGH_REPLICAS,
        /** A repair could not reach every peer (HTTP 504). */
        REPAIR_INCOMPLETE,
        /** Bounded queues, this node's or a peer's, were full: nothing was done (HTTP 503). */
        OVERLOADED,
        /** Another membership change is in progress (HTTP 409). */
        CHANGE_IN_PROGRESS,
        /** A member a membership change needs is unreachable (HTTP 503). */
        MEMBER_UNREACHABLE,
        /** This node left the cluster or was removed: clients must use a member (HTTP 503). */
        NOT_A_MEMBER,
        /** This node's clock is off from its peers': it stamps no writes, clients must write elsewhere (HTTP 503). */
        CLOCK_OFFSET,
        /** What the request names does not exist, e.g. an unknown backup (HTTP 404). */
        NOT_FOUND
    }

    private final Code code;

    protected RequestException(Code code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public final Code code() {
        return code;
    }
}
