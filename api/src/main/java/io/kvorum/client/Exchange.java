package io.kvorum.client;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
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

    /**
     * An answer read part by part as it arrives rather than whole (a range's entries): its exchange
     * completes when its last part was read, and holds its connection until then. Event-loop confined.
     */
    interface Stream {
        /** The answer's next part, head first; the caller releases it. */
        void read(ChannelHandlerContext ctx, HttpObject part);

        /** The connection's reading paused (the connection does not read by itself while a stream is read). */
        void readComplete(ChannelHandlerContext ctx);
    }

    /** What a streamed exchange completes with once its answer was read to its end. */
    static final Response STREAMED = new Response(200, null, new byte[0]);

    final HttpMethod method;
    final String target;
    private final byte[] body;
    /** Null: the answer is aggregated into {@link #result}. */
    final Stream stream;
    final CompletableFuture<Response> result = new CompletableFuture<>();
    private volatile Channel channel;
    /** Set before the exchange is handed to its connection, which publishes it to the event loop. */
    private HttpHeaders headers;

    Exchange(HttpMethod method, String target, byte[] body) {
        this(method, target, body, null);
    }

    /** A {@code GET} whose answer {@code stream} reads as it arrives. */
    static Exchange streamed(String target, Stream stream) {
        return new Exchange(HttpMethod.GET, target, null, stream);
    }

    private Exchange(HttpMethod method, String target, byte[] body, Stream stream) {
        this.method = method;
        this.target = target;
        this.body = body;
        this.stream = stream;
        result.whenComplete((r, e) -> {
            if (e != null) {
                closeConnection();
            }
        });
    }

    /** Whether this is {@code GET /v0/status}, the one request that needs no token (docs/operations.md#security). */
    boolean isStatus() {
        return method == HttpMethod.GET && target.equals("/v0/status");
    }

    /** The headers every request to its node carries ({@link Endpoint#headers}); set once, before it is sent. */
    void headers(HttpHeaders headers) {
        this.headers = headers;
    }

    /** Called on the event loop as the request is written to {@code ch}. */
    FullHttpRequest toRequest(Channel ch) {
        channel = ch;
        if (result.isCompletedExceptionally()) { // failed since the handler looked: the listener saw no channel
            closeConnection();
        }
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, target,
                body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        request.headers().set(headers);
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
