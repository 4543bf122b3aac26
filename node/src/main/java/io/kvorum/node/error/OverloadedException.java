package io.kvorum.node.error;

/**
 * Work was refused because bounded queues were full (this node's storage, the requests in flight
 * to a peer, or the peer's own queues): it had no effect, and the client may retry
 * ({@code 503} with {@code Retry-After}).
 */
public class OverloadedException extends RequestException {
    public OverloadedException(String message) {
        super(Code.OVERLOADED, message);
    }
}
