package io.kvorum.node.http;

import io.kvorum.node.model.EntryStream;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.concurrent.CompletableFuture;

/**
 * What a request is answered with, as {@link RequestRouter} decides it and {@link ConnectionHandler}
 * writes it, in the request's turn on its connection.
 */
sealed interface Answer {

    static Answer now(FullHttpResponse response) {
        return new Complete(CompletableFuture.completedFuture(response));
    }

    static Answer later(CompletableFuture<FullHttpResponse> response) {
        return new Complete(response);
    }

    /**
     * One response, once the future completes (on any thread); a failed future is answered as
     * {@link Responses#forFailure} says.
     */
    record Complete(CompletableFuture<FullHttpResponse> response) implements Answer {
    }

    /** A range: one chunk per entry of the stream, written as the client reads ({@link RangeResponder}). */
    record Streamed(EntryStream entries) implements Answer {
    }
}
