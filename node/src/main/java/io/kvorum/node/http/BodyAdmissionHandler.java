package io.kvorum.node.http;

import io.kvorum.node.security.BearerTokens;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
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
 * Decides from a request's headers whether its body is read at all, holds one connection's request
 * bodies to the gateway-wide {@link ByteBudget}, and gives each body a bounded time to
 * arrive. It sits after the HTTP codec and before the aggregator.
 *
 * <p>On a node that asks for bearer tokens, a request with a body and without a valid token is
 * answered {@code 401} before its body is read, one whose token's role falls short {@code 403},
 * and the connection is closed, the way a body that does not fit the budget is (below): a client
 * without a token that allows the request cannot make the node hold bodies. A request without a
 * body goes on, and the connection handler asks {@link BearerAuthentication} itself.
 *
 * <p>On a connection the gateway refused ({@link ConnectionLimit}), every request is refused the
 * same way, with {@link TooManyConnectionsException}: answered 503 from its headers, body unread,
 * and the connection closed. So is a request whose HTTP version is not 1.x or whose body's length
 * cannot be known from its {@code Transfer-Encoding} ({@link UnreadableRequestException}): what
 * follows its headers is never read as a request.
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
 * <p>A request must arrive whole, headers and body, within {@value #REQUEST_SECONDS} s of a read
 * that left it incomplete, or the connection is closed: a client that starts a request and stalls
 * holds its reservation, or the codec's buffer of its headers (up to 32 KiB), that long at most.
 * The bytes are noticed by {@link #arrivals}, a stage before the codec. A request that comes in
 * one read costs no timer, and one that waits because this node stopped reading (an earlier
 * request on the connection is still in progress) is given more time.
 *
 * <p>A request whose body a read left incomplete counts in {@code arriving} until its last content
 * has passed on (or the connection closes): a graceful stop waits for the bodies still being
 * uploaded, as it waits for the requests in progress.
 *
 * <p>Threading: the channel's event loop only, but for the shared budget and counter.
 */
final class BodyAdmissionHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(HttpGateway.class);
    static final int REQUEST_SECONDS = 60;
    static final int LINGER_SECONDS = 2;

    private final ByteBudget budget;
    private final int maxValueBytes;
    private final BearerTokens tokens;
    private final InFlightRequests arriving;
    /** Non-null on a refused connection: why every request on it is refused. */
    private final RuntimeException refusal;
    /** What each request not yet answered reserved, oldest first. */
    private final ArrayDeque<Long> reserved = new ArrayDeque<>();
    /** After a refusal: everything read is dropped until the connection closes. */
    private boolean refusing;
    /** A lingering close has begun: output shut, reading on, the real close scheduled. */
    private boolean lingering;
    /** A request's headers have passed and its last content has not. */
    private boolean awaitingBody;
    /** This connection's request counts in {@code arriving}. */
    private boolean counted;
    /** Bytes came in that the codec has not turned into anything yet: an incomplete request head. */
    private boolean unparsedBytes;
    private ScheduledFuture<?> requestDeadline;

    /**
     * @param tokens   the bearer tokens the node asks for, or null for none
     * @param arriving counts the requests whose body is being read, so that a graceful stop waits for them
     */
    BodyAdmissionHandler(ByteBudget budget, int maxValueBytes, BearerTokens tokens, InFlightRequests arriving) {
        this(budget, maxValueBytes, tokens, arriving, null);
    }

    private BodyAdmissionHandler(ByteBudget budget, int maxValueBytes, BearerTokens tokens,
                                 InFlightRequests arriving, RuntimeException refusal) {
        this.budget = budget;
        this.maxValueBytes = maxValueBytes;
        this.tokens = tokens;
        this.arriving = arriving;
        this.refusal = refusal;
    }

    /** The stage of a connection the gateway refused: its first request is answered with {@code why}. */
    static BodyAdmissionHandler refusingEvery(RuntimeException why) {
        return new BodyAdmissionHandler(new ByteBudget(1), 0, null, new InFlightRequests(), why);
    }

    /** The stage to put before the codec, so that this one knows when bytes came in. One per connection. */
    ChannelInboundHandlerAdapter arrivals() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                unparsedBytes = true;
                ctx.fireChannelRead(msg);
            }
        };
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        unparsedBytes = false;
        if (refusing) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request) {
            if (refusal != null) {
                refuse(ctx, request, refusal);
                return;
            }
            UnreadableRequestException unreadable = request.decoderResult().isFailure()
                    ? null : UnreadableRequestException.of(request);
            if (unreadable != null) {
                refuse(ctx, request, unreadable);
                return;
            }
            long body = bodyBytes(request);
            BearerAuthentication.Refusal unauthorized = tokens != null && body > 0
                    ? BearerAuthentication.admit(tokens, request).refusal() : null;
            if (unauthorized != null) {
                refuse(ctx, request, new UnauthorizedBodyException(unauthorized));
                return;
            }
            // A body over the limit reserves nothing: the aggregator refuses it (413) unread.
            long bytes = body > maxValueBytes ? 0 : body;
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
            ctx.fireChannelRead(msg); // the whole request now counts in the connection handler's requests
            stopCounting();
            return;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (awaitingBody && !refusing && !counted) {
            // Counted only when a read leaves it incomplete: a request that comes whole in one read
            // (nearly all) costs no update of the shared counter.
            counted = true;
            arriving.started();
        }
        if (incomplete() && requestDeadline == null) {
            armDeadline(ctx);
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
            if (reserved.isEmpty()) {
                // The answer was to the newest request, maybe before its body came (a 413, a refused
                // 100-continue): a stop has nothing more to wait for on this connection.
                stopCounting();
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
        bodyEnds();
        cancelDeadline();
        channel.config().setAutoRead(true); // the connection handler may have paused reading
        channel.shutdownOutput().addListener(shut -> ctx.executor().schedule(
                () -> ctx.close(promise), shut.isSuccess() ? LINGER_SECONDS : 0, TimeUnit.SECONDS));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        bodyEnds();
        releaseAll();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        bodyEnds();
        releaseAll();
    }

    /**
     * The bytes of body that follow these headers: the declared {@code Content-Length}, or
     * {@code --max-value-bytes} for a chunked body; 0 for none, for a request answered without
     * reading one (it failed to decode: 400 and the like), and for one already whole.
     */
    private long bodyBytes(HttpRequest request) {
        if (request.decoderResult().isFailure() || request instanceof FullHttpRequest) {
            return 0;
        }
        if (HttpUtil.isTransferEncodingChunked(request)) {
            return maxValueBytes;
        }
        try {
            return Math.max(0, HttpUtil.getContentLength(request, 0L));
        } catch (NumberFormatException e) {
            return 0; // the aggregator refuses it
        }
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request, RuntimeException why) {
        refusing = true;
        bodyEnds();
        cancelDeadline();
        reserved.add(0L);
        // With its headers, so that the connection handler knows whose token it carried (the audit log).
        FullHttpRequest refused = new DefaultFullHttpRequest(request.protocolVersion(), request.method(), request.uri(),
                Unpooled.EMPTY_BUFFER, request.headers().copy(), EmptyHttpHeaders.INSTANCE);
        HttpUtil.setKeepAlive(refused, false);
        refused.setDecoderResult(DecoderResult.failure(why));
        ReferenceCountUtil.release(request);
        ctx.fireChannelRead(refused);
    }

    /** Every other way a body stops arriving: refused, or its connection closing. */
    private void bodyEnds() {
        awaitingBody = false;
        stopCounting();
    }

    private void stopCounting() {
        if (counted) {
            counted = false;
            arriving.finished();
        }
    }

    /** A request has begun to arrive and is not whole yet. */
    private boolean incomplete() {
        return !refusing && (awaitingBody || unparsedBytes);
    }

    private void armDeadline(ChannelHandlerContext ctx) {
        requestDeadline = ctx.executor().schedule(() -> {
            requestDeadline = null;
            if (!incomplete() || !ctx.channel().isActive()) {
                return;
            }
            if (!ctx.channel().config().isAutoRead()) {
                armDeadline(ctx); // this node stopped reading, not the client sending
                return;
            }
            log.debug("closing connection {}: a request did not arrive whole within {} s",
                    ctx.channel().remoteAddress(), REQUEST_SECONDS);
            ctx.close();
        }, REQUEST_SECONDS, TimeUnit.SECONDS);
    }

    private void cancelDeadline() {
        if (requestDeadline != null) {
            requestDeadline.cancel(false);
            requestDeadline = null;
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
