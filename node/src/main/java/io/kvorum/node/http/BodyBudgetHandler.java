package io.kvorum.node.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds one connection's request bodies to the gateway-wide {@link RequestBodyBudget}, and gives
 * each body a bounded time to arrive. It sits after the HTTP codec and before the aggregator.
 *
 * <p>Inbound: a request's headers reserve its declared {@code Content-Length}; a chunked body,
 * whose length is not known, reserves {@code --max-value-bytes}; a body declared over that limit
 * reserves nothing, as the aggregator refuses it (413) without reading it. When the reservation
 * does not fit, the request goes no further: in its place the connection handler gets a request
 * that failed to decode with {@link BodyBudgetExhaustedException}, answers it 503 in its turn and
 * closes the connection, and everything the client sends after it is dropped unread. A client that
 * sent {@code Expect: 100-continue} never sends the body.
 *
 * <p>Outbound: HTTP/1.1 answers requests in order, one final answer each, so each final answer
 * (a complete response, or the last chunk of a streamed one; not a {@code 100 Continue}) gives
 * back what the oldest unanswered request reserved. A connection that closes gives back all that
 * its requests still hold.
 *
 * <p>A body must arrive within {@value #BODY_SECONDS} s of its headers, or the connection is closed:
 * a client that starts a body and stalls holds its reservation that long at most. The clock
 * starts only for a body that did not come in the same read as its headers (the usual case costs
 * no timer), and a body that waits because this node stopped reading (an earlier request on the
 * connection is still in progress) is given more time.
 *
 * <p>Threading: the channel's event loop only, but for the shared budget.
 */
final class BodyBudgetHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(HttpGateway.class);
    static final int BODY_SECONDS = 60;

    private final RequestBodyBudget budget;
    private final int maxValueBytes;
    /** What each request not yet answered reserved, oldest first. */
    private final ArrayDeque<Long> reserved = new ArrayDeque<>();
    /** After a refusal: everything read is dropped until the connection closes. */
    private boolean refusing;
    /** A request's headers have passed and its last content has not. */
    private boolean awaitingBody;
    private ScheduledFuture<?> bodyDeadline;

    BodyBudgetHandler(RequestBodyBudget budget, int maxValueBytes) {
        this.budget = budget;
        this.maxValueBytes = maxValueBytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refusing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request) {
            long bytes = reservationFor(request);
            if (!budget.tryReserve(bytes)) {
                refuse(ctx, request);
                return;
            }
            reserved.add(bytes);
            awaitingBody = true;
        }
        if (msg instanceof LastHttpContent) {
            awaitingBody = false;
            cancelDeadline();
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (awaitingBody && bodyDeadline == null) {
            armDeadline(ctx, BODY_SECONDS);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        boolean interim = msg instanceof HttpResponse response
                && response.status().codeClass() == HttpStatusClass.INFORMATIONAL;
        if (!interim && msg instanceof LastHttpContent) {
            Long answered = reserved.poll();
            if (answered != null) {
                budget.release(answered);
            }
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        releaseAll();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseAll();
    }

    private long reservationFor(HttpRequest request) {
        if (request.decoderResult().isFailure() || request instanceof FullHttpRequest) {
            return 0; // answered without a body read (400 and the like), or already whole
        }
        if (HttpUtil.isTransferEncodingChunked(request)) {
            return maxValueBytes;
        }
        long declared;
        try {
            declared = HttpUtil.getContentLength(request, 0L);
        } catch (NumberFormatException e) {
            return 0; // the aggregator refuses it
        }
        return declared > maxValueBytes || declared < 0 ? 0 : declared;
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request) {
        refusing = true;
        awaitingBody = false;
        cancelDeadline();
        reserved.add(0L);
        FullHttpRequest refused = new DefaultFullHttpRequest(request.protocolVersion(), request.method(), request.uri(),
                Unpooled.EMPTY_BUFFER);
        HttpUtil.setKeepAlive(refused, false);
        refused.setDecoderResult(DecoderResult.failure(new BodyBudgetExhaustedException(budget.limit())));
        ReferenceCountUtil.release(request);
        ctx.fireChannelRead(refused);
    }

    private void armDeadline(ChannelHandlerContext ctx, long seconds) {
        bodyDeadline = ctx.executor().schedule(() -> {
            bodyDeadline = null;
            if (!awaitingBody || !ctx.channel().isActive()) {
                return;
            }
            if (!ctx.channel().config().isAutoRead()) {
                armDeadline(ctx, BODY_SECONDS); // this node stopped reading, not the client sending
                return;
            }
            log.debug("closing connection {}: a request body did not arrive within {} s",
                    ctx.channel().remoteAddress(), BODY_SECONDS);
            ctx.close();
        }, seconds, TimeUnit.SECONDS);
    }

    private void cancelDeadline() {
        if (bodyDeadline != null) {
            bodyDeadline.cancel(false);
            bodyDeadline = null;
        }
    }

    private void releaseAll() {
        cancelDeadline();
        Long bytes;
        while ((bytes = reserved.poll()) != null) {
            budget.release(bytes);
        }
    }
}
