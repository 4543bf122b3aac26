package io.kvorum.node.coordinator;

import io.kvorum.node.error.RequestException;

/** Fewer than {@code ack} replicas answered in time; the HTTP layer answers 504. */
public final class NotEnoughReplicasException extends RequestException {
    public NotEnoughReplicasException(String message) {
        super(Code.NOT_ENOUGH_REPLICAS, message);
    }
}
