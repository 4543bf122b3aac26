package io.kvorum.node.coordinator;

/**
 * A replica did not answer: it is down, unreachable, refused us, or missed the deadline. The
 * outcome of a write is then unknown (it may or may not have been stored).
 */
public final class ReplicaUnavailableException extends RuntimeException {
    public ReplicaUnavailableException(String message) {
        super(message, null, false, false);
    }
}
