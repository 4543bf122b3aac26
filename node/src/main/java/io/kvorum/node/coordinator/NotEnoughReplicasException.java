package io.kvorum.node.coordinator;

/** Fewer than {@code ack} replicas answered in time; the HTTP layer answers 504. */
public final class NotEnoughReplicasException extends RuntimeException {
    public NotEnoughReplicasException(String message) {
        super(message, null, false, false);
    }
}
