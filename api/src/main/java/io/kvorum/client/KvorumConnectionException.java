package io.kvorum.client;

import java.io.IOException;

/**
 * The connection to a node was lost after the request was written (or while it was queued on a
 * pipelined connection), so whether it took effect is unknown. Failures to connect at all are
 * reported as {@link java.net.ConnectException} instead (the request was never sent).
 */
public final class KvorumConnectionException extends IOException {

    public KvorumConnectionException(String message) {
        super(message);
    }

    public KvorumConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
