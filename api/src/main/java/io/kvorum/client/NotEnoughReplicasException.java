package io.kvorum.client;

/**
 * 504 {@code Not Enough Replicas}: fewer than {@code ack} replicas answered within the node's
 * request timeout. A write may still have reached some replicas (and may be repaired onto the
 * others later), so its outcome is unknown. Never retried by the client.
 */
public final class NotEnoughReplicasException extends KvorumException {

    public NotEnoughReplicasException(String message) {
        super(504, message);
    }
}
