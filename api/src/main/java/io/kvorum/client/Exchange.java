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
 * is completed from outside (the call's deadline passed) while still waiting on its connection,
 * that connection is closed: its answer is overdue, and every request queued behind it on the
 * pipelined connection would wait for it.
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
    }

    /** Called on the event loop as the request is written to {@code ch}. */
    FullHttpRequest toRequest(Channel ch, HttpHeaders common) {
        channel = ch;
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, target,
                body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        request.headers().set(common);
        if (body != null) {
            request.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        }
        return request;
    }

    /** Fails the exchange from outside; closes its connection if it was waiting there. */
    void abort(Throwable cause) {
        if (result.completeExceptionally(cause)) {
            Channel ch = channel;
            if (ch != null) {
                ch.close();
            }
        }
    }
}
