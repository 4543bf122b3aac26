package io.kvorum.node.http;

import io.kvorum.node.security.BearerTokens;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
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
 * Decides from a request's headers whether its body is read at all, holds one connection's request
 * bodies to the gateway-wide {@link RequestBodyBudget}, and gives each body a bounded time to
 * arrive. It sits after the HTTP codec and before the aggregator.
 *
 * <p>On a node that asks for bearer tokens, a request with a body and without a valid token is
 * answered {@code 401} before its body is read, and the connection is closed, the way a body
 * that does not fit the budget is (below): a client without a token cannot make the node hold
 * bodies. A request without a body goes on, and {@link BearerAuthentication} answers it.
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
 * <p>A close while a body may still be coming (after a refusal, or a 413 on a connection that
 * does not stay open) lingers: the node stops sending, then reads what the client still sends,
 * dropping it, for up to {@value #LINGER_SECONDS} s before it closes. Closing at once, with the
 * body's bytes unread in the socket, would make the kernel reset the connection, and a reset can
 * destroy the answer before the client reads it.
 *
 * <p>A body must arrive within {@value #BODY_SECONDS} s of its headers, or the connection is closed:
 * a client that starts a body and stalls holds its reservation that long at most. The clock
 * starts only for a body that did not come in the same read as its headers (the usual case costs
 * no timer), and a body that waits because this node stopped reading (an earlier request on the
 * connection is still in progress) is given more time.
 *
 * <p>Threading: the channel's event loop only, but for the shared budget.
 */
final class BodyAdmissionHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(HttpGateway.class);
    static final int BODY_SECONDS = 60;
    static final int LINGER_SECONDS = 2;

    private final RequestBodyBudget budget;
    private final int maxValueBytes;
    private final BearerTokens tokens;
    /** What each request not yet answered reserved, oldest first. */
    private final ArrayDeque<Long> reserved = new ArrayDeque<>();
    /** After a refusal: everything read is dropped until the connection closes. */
    private boolean refusing;
    /** A lingering close has begun: output shut, reading on, the real close scheduled. */
    private boolean lingering;
    /** A request's headers have passed and its last content has not. */
    private boolean awaitingBody;
    private ScheduledFuture<?> bodyDeadline;

    /** @param tokens the bearer tokens the node asks for, or null for none */
    BodyAdmissionHandler(RequestBodyBudget budget, int maxValueBytes, BearerTokens tokens) {
        this.budget = budget;
        this.maxValueBytes = maxValueBytes;
        this.tokens = tokens;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refusing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request) {
            if (tokens != null && carriesBody(request) && !BearerAuthentication.admits(tokens, request)) {
                refuse(ctx, request, new UnauthenticatedBodyException(
                        request.headers().contains(HttpHeaderNames.AUTHORIZATION)));
                return;
            }
            long bytes = reservationFor(request);
            if (!budget.tryReserve(bytes)) {
                refuse(ctx, request, new BodyBudgetExhaustedException(budget.limit()));
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
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (lingering) {
            // Another stage closing too (keep-alive after the answer): done when the lingering close is.
            ctx.channel().closeFuture().addListener(closed -> promise.trySuccess());
            return;
        }
        boolean bodyStillComing = refusing || awaitingBody;
        if (!bodyStillComing || !(ctx.channel() instanceof DuplexChannel channel) || !channel.isActive()) {
            ctx.close(promise);
            return;
        }
        lingering = true;
        refusing = true; // nothing read from now on is a request to answer
        awaitingBody = false;
        cancelDeadline();
        channel.config().setAutoRead(true); // the connection handler may have paused reading
        channel.shutdownOutput().addListener(shut -> ctx.executor().schedule(
                () -> ctx.close(promise), shut.isSuccess() ? LINGER_SECONDS : 0, TimeUnit.SECONDS));
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
        if (!carriesBody(request)) {
            return 0;
        }
        if (HttpUtil.isTransferEncodingChunked(request)) {
            return maxValueBytes;
        }
        long declared = declaredLength(request);
        return declared > maxValueBytes ? 0 : declared; // the aggregator refuses one over the limit (413), unread
    }

    /**
     * Whether a body follows these headers: not for a request answered without reading one (it
     * failed to decode: 400 and the like), nor for one already whole.
     */
    private static boolean carriesBody(HttpRequest request) {
        if (request.decoderResult().isFailure() || request instanceof FullHttpRequest) {
            return false;
        }
        return HttpUtil.isTransferEncodingChunked(request) || declaredLength(request) > 0;
    }

    /** The body's {@code Content-Length}, 0 if none. */
    private static long declaredLength(HttpRequest request) {
        try {
            return Math.max(0, HttpUtil.getContentLength(request, 0L));
        } catch (NumberFormatException e) {
            return 0; // the aggregator refuses it
        }
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request, RuntimeException why) {
        refusing = true;
        awaitingBody = false;
        cancelDeadline();
        reserved.add(0L);
        FullHttpRequest refused = new DefaultFullHttpRequest(request.protocolVersion(), request.method(), request.uri(),
                Unpooled.EMPTY_BUFFER);
        HttpUtil.setKeepAlive(refused, false);
        refused.setDecoderResult(DecoderResult.failure(why));
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
