package io.kvorum.client;

import java.net.http.HttpTimeoutException;

/**
 * The call's deadline (its {@link KvorumClient.Options#timeout()}, else the client's request
 * timeout) passed before it completed, attempts and backoff included. Its outcome is unknown.
 * A {@link HttpTimeoutException}, as the client on {@code java.net.http} reported it.
 */
public final class KvorumTimeoutException extends HttpTimeoutException {

    public KvorumTimeoutException(String message) {
        super(message);
    }
}
