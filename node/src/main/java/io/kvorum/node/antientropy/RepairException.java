package io.kvorum.node.antientropy;

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
}
