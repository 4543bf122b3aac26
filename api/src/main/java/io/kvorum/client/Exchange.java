package io.kvorum.client;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.util.concurrent.CompletableFuture;

/**
 * One request/answer on a pooled connection: one attempt of a call. Its {@link #result} completes
 * on the connection's event loop, or on the caller's thread when it could not be queued. When it
 * fails once written to its connection (the call's deadline passed, the client closed, the
 * connection broke), that connection is closed: a node answers a connection's requests in order,
 * so an overdue answer would hold every request pipelined behind it, and a late one could never be
 * matched to its request again.
 */
final class Exchange {

    final HttpMethod method;
    final String target;
    private final byte[] body;
    final CompletableFuture<Response> result = new CompletableFuture<>();
    private volatile Channel channel;

    Exchange(HttpMethod method, String target, byte[] body) {
        this.method = method;
        this.target = target;
        this.body = body;
        result.whenComplete((r, e) -> {
            if (e != null) {
                closeConnection();
            }
        });
    }

    /** Called on the event loop as the request is written to {@code ch}. */
    FullHttpRequest toRequest(Channel ch, HttpHeaders common) {
        channel = ch;
        if (result.isCompletedExceptionally()) { // failed since the handler looked: the listener saw no channel
            closeConnection();
        }
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, target,
                body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        request.headers().set(common);
        if (body != null) {
            request.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        }
        return request;
    }

    /** Whether the request was handed to its connection (a failure then closes that connection). */
    boolean written() {
        return channel != null;
    }

    /** Fails the exchange from outside (and so closes its connection if it was written there). */
    void abort(Throwable cause) {
        result.completeExceptionally(cause);
    }

    private void closeConnection() {
        Channel ch = channel;
        if (ch != null) {
            ch.close();
        }
    }
}
