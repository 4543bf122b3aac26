package io.kvorum.node.antientropy;

import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.util.Failures;

/**
 * Why an anti-entropy round failed, as a {@link Reason} that each transport maps to its own error
 * codes in one switch, plus a message for the operator.
 */
public final class RepairException extends RuntimeException {

    /** The kinds of failure a round can end with. */
    public enum Reason {
        /** The peer could not be reached, or the connection to it broke. */
        UNREACHABLE,
        /** The peer stopped answering for longer than the idle timeout, or the round hit its deadline. */
        TIMEOUT,
        /** The peer refused the round: another cluster, or parameters it cannot serve. */
        REFUSED,
        /** A side's bounded resources (storage queues, concurrent rounds) were full; try again later. */
        OVERLOADED,
        /** A message out of order or malformed. */
        PROTOCOL,
        /** The round was cancelled on this side (shutdown). */
        CANCELLED,
        /** Anything else: a storage failure, a bug. */
        INTERNAL
    }

    private final Reason reason;

    public RepairException(Reason reason, String message) {
        this(reason, message, null);
    }

    public RepairException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    /**
     * What a failure of a round's storage or stream means for the round: itself if it is a
     * RepairException (after unwrapping futures' wrappers), OVERLOADED for storage that refused,
     * PROTOCOL for a malformed message, INTERNAL for anything else.
     */
    public static RepairException of(Throwable error) {
        Throwable t = Failures.unwrap(error);
        if (t instanceof RepairException r) {
            return r;
        }
        if (t instanceof OverloadedException) {
            return new RepairException(Reason.OVERLOADED, t.getMessage(), t);
        }
        if (t instanceof IllegalArgumentException) {
            return new RepairException(Reason.PROTOCOL, t.getMessage(), t);
        }
        return new RepairException(Reason.INTERNAL, String.valueOf(t), t);
    }
}
