package io.kvorum.node.http;

import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.Role;
import io.kvorum.node.util.Failures;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last stage of the HTTP pipeline, one per connection: answers its requests one at a time, in
 * the order they arrived (HTTP/1.1 pipelining), each with what the router makes of it, and after
 * each answer keeps the connection open or closes it, as the request asked. On a node that asks
 * for bearer tokens, a request goes to the router only once {@link BearerAuthentication} admits it
 * (else 401 or 403, and no effect). A request that failed
 * to decode is answered here in its turn (400, 413, 414, 431; 401, 403 or 503 for a body that
 * {@link BodyAdmissionHandler} would not read; 400, 501 or 505 for a request whose framing or
 * version it would have to guess, {@link UnreadableRequestException}); after any such failure but
 * a body over the limit, the connection closes, since the rest of the stream cannot be trusted.
 *
 * <p>Threading: every field is confined to the channel's event loop, and nothing here blocks:
 * answers that complete on other threads (storage, transport) are written back on the event loop.
 * While a request is in progress, later ones wait in {@code queued} and reading from the socket
 * pauses, which also bounds the queue. Every request counts in {@link InFlightRequests} from when
 * it arrives whole (queued or started) until its answer is written or the connection closes. A client operation whose answer was
 * written (the last chunk, for a range) is counted by {@link RequestMetering} with its status and
 * latency; one whose connection closed first is not, as nobody was answered, but for a range whose
 * status line went out (its client left, or a node's failure cut it short): it counts when it ends.
 * An administrative request is logged in the {@link AuditLog} as soon as its status is known,
 * whether or not its client is still there to read the answer.
 *
 * <p>The complete answer to a {@code GET} holds its body in the gateway-wide {@link ByteBudget} of
 * answers from the moment it is written until its last byte has gone to the socket (or the
 * connection closed): a client that asks for a large value and does not read it keeps the value
 * in the node's memory meanwhile. An answer that does not fit is replaced by a 503, which is true
 * of a {@code GET}: it had no effect. The answers to other methods, whose effect has taken place,
 * are always sent; they are small. A streamed range holds its batches in the same budget
 * ({@link RangeResponder}).
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(HttpGateway.class);

    private final Function<FullHttpRequest, Answer> router;
    private final BearerTokens tokens;
    private final InFlightRequests inFlight;
    private final RequestMetering metering;
    private final ByteBudget answers;
    private final long rangePullBytes;
    private final ArrayDeque<FullHttpRequest> queued = new ArrayDeque<>();
    private boolean busy;
    private boolean keepAlive;
    /** Whether the request in progress is HTTP/1.0, whose client takes an answer without {@code Connection} as the last. */
    private boolean http10;
    /** Whether the request in progress is a GET, whose answer may be refused for want of memory. */
    private boolean safe;
    private RangeResponder range;
    /** The request in progress: its operation (null if it is none), when it started, and the status it was answered. */
    private NodeMetrics.Op op;
    private long startNanos;
    private int status;
    /** The request in progress when it is administrative: the audit log's entry, logged with its status. */
    private AuditLog.Entry audit;

    /**
     * @param router  decides the answer to a request without blocking; reads the request only before returning
     * @param tokens  the bearer tokens the node asks for, or null for none
     * @param answers the bytes of answer bodies that all connections may hold unsent at once
     * @param rangePullBytes the most a batch of a range may hold, reserved in {@code answers} before it is read
     */
    ConnectionHandler(Function<FullHttpRequest, Answer> router, BearerTokens tokens, InFlightRequests inFlight,
                      RequestMetering metering, ByteBudget answers, long rangePullBytes) {
        this.router = router;
        this.tokens = tokens;
        this.inFlight = inFlight;
        this.metering = metering;
        this.answers = answers;
        this.rangePullBytes = rangePullBytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        inFlight.started(); // in progress while it waits its turn too: a graceful stop waits for it
        if (busy) {
            queued.add(request);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        start(ctx, request);
    }

    private void start(ChannelHandlerContext ctx, FullHttpRequest request) {
        busy = true;
        keepAlive = HttpUtil.isKeepAlive(request);
        http10 = !request.protocolVersion().isKeepAliveDefault();
        safe = HttpMethod.GET.equals(request.method());
        startNanos = System.nanoTime();
        try {
            op = metering.operations().apply(request); // a request refused as malformed counts too
            Role role = EndpointRoles.of(request);
            BearerAuthentication.Admission admission = BearerAuthentication.admit(tokens, request, role);
            audit = AuditLog.of(role, request, admission.name(), ctx.channel().remoteAddress(), startNanos);
            DecoderResult decoded = request.decoderResult();
            if (decoded.isFailure()) {
                // After a body over the limit the aggregator may have kept the connection usable;
                // after any other decoding failure the rest of the stream cannot be trusted.
                if (!(decoded.cause() instanceof BodyTooLargeException)) {
                    keepAlive = false;
                }
                respond(ctx, malformed(decoded.cause()));
                return;
            }
            if (admission.refusal() != null) {
                respond(ctx, admission.refusal().response());
                return;
            }
            Answer answer = router.apply(request);
            if (answer instanceof Answer.Streamed streamed) {
                range = new RangeResponder(ctx, streamed.entries(), this, answers, rangePullBytes);
                range.start();
            } else {
                answer(ctx, ((Answer.Complete) answer).response());
            }
        } catch (RuntimeException e) {
            respond(ctx, Responses.forFailure(e));
        } finally {
            request.release();
        }
    }

    /** Writes the future's answer, or the answer for its failure: at once if it is done, else on the event loop. */
    private void answer(ChannelHandlerContext ctx, CompletableFuture<FullHttpResponse> future) {
        BiConsumer<FullHttpResponse, Throwable> write = (response, error) ->
                respond(ctx, error == null ? response : Responses.forFailure(error));
        if (future.isDone()) {
            future.whenComplete(write);
        } else {
            future.whenCompleteAsync(write, ctx.executor());
        }
    }

    /**
     * Writes a complete answer to the request in progress; for a GET, a 503 instead if its body
     * does not fit the budget of answers. Event loop only.
     */
    void respond(ChannelHandlerContext ctx, FullHttpResponse response) {
        int bytes = safe ? response.content().readableBytes() : 0;
        if (!answers.tryReserve(bytes)) {
            response.release();
            response = answersOverloaded();
            bytes = 0;
        }
        answered(response.status().code());
        setKeepAlive(response);
        int held = bytes;
        ctx.writeAndFlush(response).addListener(f -> {
            answers.release(held);
            finished(ctx);
        });
    }

    /**
     * Says in the answer whether the connection stays open. Answers are HTTP/1.1, which keeps
     * connections by default; an HTTP/1.0 client closes unless the answer says
     * {@code Connection: keep-alive}.
     */
    private void setKeepAlive(HttpResponse response) {
        HttpUtil.setKeepAlive(response, keepAlive);
        if (keepAlive && http10) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
    }

    /** The 503 for a GET whose answer does not fit the budget of answers. */
    FullHttpResponse answersOverloaded() {
        return Responses.overloaded("the answers not yet read by their clients reached this node's limit of "
                + answers.limit() + " bytes");
    }

    /** Begins a streamed answer (the headers). Event loop only. */
    void respondStreaming(ChannelHandlerContext ctx, HttpResponse head) {
        answered(head.status().code());
        setKeepAlive(head);
        ctx.write(head);
    }

    /**
     * The status of the answer to the request in progress is known: kept for the metrics, and
     * logged in the audit log if the request is administrative, even when its client is gone.
     */
    private void answered(int code) {
        status = code;
        if (audit != null) {
            audit.answered(code);
            audit = null;
        }
    }

    /** The request in progress is answered; start the next queued one. Event loop only. */
    void finished(ChannelHandlerContext ctx) {
        if (!busy) {
            return;
        }
        busy = false;
        range = null;
        metering.answered(op, status, System.nanoTime() - startNanos);
        op = null;
        inFlight.finished();
        if (!keepAlive) {
            ctx.close();
            return;
        }
        FullHttpRequest next = queued.poll();
        if (next != null) {
            start(ctx, next);
        } else if (ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    private static FullHttpResponse malformed(Throwable cause) {
        if (cause instanceof BodyTooLargeException tooLarge) {
            return Responses.tooLarge(tooLarge.limit());
        }
        if (cause instanceof BodyBudgetExhaustedException || cause instanceof TooManyConnectionsException) {
            return Responses.overloaded(cause.getMessage());
        }
        if (cause instanceof UnreadableRequestException unreadable) {
            return Responses.text(unreadable.status(), unreadable.getMessage());
        }
        if (cause instanceof UnauthorizedBodyException unauthorized) {
            return unauthorized.refusal().response();
        }
        if (cause instanceof TooLongHttpLineException) {
            return Responses.text(HttpResponseStatus.REQUEST_URI_TOO_LONG, "request line too long");
        }
        if (cause instanceof TooLongHttpHeaderException) {
            return Responses.text(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request headers too large");
        }
        if (cause instanceof TooLongFrameException) {
            return Responses.text(HttpResponseStatus.BAD_REQUEST, "request too large: " + cause.getMessage());
        }
        return Responses.text(HttpResponseStatus.BAD_REQUEST, "malformed HTTP request: " + cause.getMessage());
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (range != null) {
            range.onWritabilityChanged();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        boolean rangeBegun = range != null && range.begun();
        if (range != null) {
            range.abort();
        }
        if (busy) {
            busy = false;
            if (rangeBegun) {
                // Its status line went out, so it counts as answered so: a range whose client left, or
                // that was cut short by a node's failure, is as much a request served as a finished one.
                metering.answered(op, status, System.nanoTime() - startNanos);
            }
            inFlight.finished();
        }
        FullHttpRequest r;
        while ((r = queued.poll()) != null) {
            r.release();
            inFlight.finished();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Connection resets and the like: the client is gone; there is nobody to answer.
        Throwable t = Failures.unwrap(cause);
        log.debug("closing connection {} after {}", ctx.channel().remoteAddress(), t.toString());
        ctx.close();
    }
}
