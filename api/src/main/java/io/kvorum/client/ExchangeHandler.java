package io.kvorum.client;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpContentException;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.ArrayDeque;

/**
 * The last stage of a pooled connection: pairs answers with requests. HTTP/1.1 answers come in
 * the order of the requests (pipelining), so the exchanges are queued here as they are written,
 * on the event loop, which makes the queue's order the order on the wire. Event-loop confined.
 *
 * <p>An exchange with a {@link Exchange.Stream stream} (a range) has its answer's parts handed to
 * that stream by {@link #streams()}, a stage before the aggregator, while the connection reads only
 * as the stream asks; once its last part is read, the connection serves the pool again.
 */
final class ExchangeHandler extends ChannelDuplexHandler {

    private final ArrayDeque<Exchange> inFlight = new ArrayDeque<>();
    private final String peer;
    private final int maxResponseBytes;
    private Throwable error;
    private boolean answered;

    ExchangeHandler(String peer, int maxResponseBytes) {
        this.peer = peer;
        this.maxResponseBytes = maxResponseBytes;
    }

    /** The stage before the aggregator that hands a streamed answer's parts to its exchange's stream. */
    ChannelInboundHandlerAdapter streams() {
        return new ChannelInboundHandlerAdapter() {
            /** The exchange whose answer is being streamed, or null. */
            private Exchange streaming;
            private boolean keepAlive;

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (streaming == null && msg instanceof HttpResponse head && inFlight.peek() != null
                        && inFlight.peek().stream != null) {
                    streaming = inFlight.peek();
                    answered = true;
                    keepAlive = HttpUtil.isKeepAlive(head);
                    ctx.channel().config().setAutoRead(false); // from now on, the stream's reader asks for more
                }
                Exchange x = streaming;
                if (x == null) {
                    ctx.fireChannelRead(msg);
                    return;
                }
                try {
                    if (!x.result.isDone()) { // else failed, its connection closing: the rest is dropped
                        x.stream.read(ctx, (HttpObject) msg);
                    }
                } finally {
                    ReferenceCountUtil.release(msg);
                }
                if (msg instanceof LastHttpContent) {
                    streaming = null;
                    inFlight.remove(x);
                    if (!keepAlive) {
                        ctx.close(); // before the connection goes back to the pool
                    } else {
                        ctx.channel().config().setAutoRead(true);
                    }
                    x.result.complete(Exchange.STREAMED);
                }
            }

            @Override
            public void channelReadComplete(ChannelHandlerContext ctx) {
                Exchange x = streaming;
                if (x != null && !x.result.isDone()) {
                    x.stream.readComplete(ctx);
                }
                ctx.fireChannelReadComplete();
            }
        };
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof Exchange x)) {
            ctx.write(msg, promise);
            return;
        }
        if (x.result.isDone()) { // timed out before its turn came
            promise.setSuccess();
            return;
        }
        inFlight.add(x);
        ctx.write(x.toRequest(ctx.channel()), promise);
        promise.addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            FullHttpResponse response = (FullHttpResponse) msg;
            answered = true;
            Exchange x = inFlight.poll();
            if (response.decoderResult().isFailure()) {
                fail(x, new IOException("malformed HTTP answer from " + peer, response.decoderResult().cause()));
                ctx.close();
            } else if (x == null) {
                ctx.close(); // an answer nobody asked for: the connection is out of step
            } else {
                x.result.complete(Response.of(response));
                if (!HttpUtil.isKeepAlive(response)) {
                    ctx.close();
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!inFlight.isEmpty()) {
            KvorumConnectionException lost = new KvorumConnectionException("connection to " + peer
                    + " closed with " + inFlight.size() + " request(s) unanswered"
                    + (answered || error != null ? "" : " and no answer ever received on it (if the node serves HTTPS, "
                    + "its endpoint is https://)"), error);
            for (Exchange x = inFlight.poll(); x != null; x = inFlight.poll()) {
                fail(x, lost);
            }
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        KvorumClient.LOG.log(System.Logger.Level.DEBUG, "connection to {0} failed: {1}", peer, cause.toString());
        if (cause instanceof TooLongHttpContentException) {
            // The answer being read belongs to the oldest request. It is too large for this client,
            // and would be as large again on a retry: that request fails for good, and the
            // connection, whose answer was cut, closes (the requests behind it are retried).
            fail(inFlight.poll(), new ResponseTooLargeException("the answer from " + peer + " is larger than "
                    + "maxResponseBytes (" + maxResponseBytes + " bytes)", cause));
        }
        error = cause;
        ctx.close();
    }

    private static void fail(Exchange x, Throwable cause) {
        if (x != null) {
            x.result.completeExceptionally(cause);
        }
    }
}
