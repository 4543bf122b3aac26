package io.kvorum.node.http;

import io.netty.handler.codec.TooLongFrameException;

/**
 * The request body is over {@code --max-value-bytes}. The aggregator hands a request carrying this
 * as its decoder failure to the {@link ConnectionHandler}, which answers {@code 413} in the request's turn.
 */
final class BodyTooLargeException extends TooLongFrameException {

    private final long limit;

    BodyTooLargeException(long limit) {
        super("request body is over the limit of " + limit + " bytes");
        this.limit = limit;
    }

    long limit() {
        return limit;
    }
}
