package io.kvorum.node.http;

import io.kvorum.node.security.BearerTokens;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The HTTP pipeline, stage by stage:
 * <ol>
 *   <li>before any stage, the {@link ConnectionLimit}: a connection past it gets the same pipeline,
 *       but every request on it is refused ({@code body-admission}), and it is closed
 *       {@value #REFUSED_SECONDS} s after it was accepted whatever it does; one past the refusals
 *       held at once is closed at once;</li>
 *   <li>{@code tls} (with {@code --tls-cert}): Netty's {@code SslHandler}, first, so that nothing
 *       but a TLS handshake reaches the stages after it; a plain-HTTP client is disconnected;</li>
 *   <li>{@code idle}: closes connections that have been silent for {@value #IDLE_SECONDS} s
 *       (slow or abandoned clients hold no resources forever);</li>
 *   <li>{@code arrivals}: tells {@code body-admission} that bytes came in, so that a request head
 *       that stalls half-sent is timed too;</li>
 *   <li>{@code codec}: Netty's HTTP/1.1 parser and encoder, with limits on the request line and
 *       headers, refusing a request with both a length and chunks ({@link GatewayHttpCodec});</li>
 *   <li>{@code keep-alive}: HTTP/1.1 persistent connections;</li>
 *   <li>{@code body-admission}: refuses a body before it is read when it has no valid bearer token
 *       (401) or one whose role falls short (403), does not fit the {@link ByteBudget} of all connections (503), or has no knowable
 *       length or HTTP version (400, 501, 505: {@link UnreadableRequestException}), and closes a
 *       connection whose request does not arrive whole in time ({@link BodyAdmissionHandler});</li>
 *   <li>{@code aggregator}: assembles the body up to {@code --max-value-bytes}, refusing a larger
 *       one from the Content-Length before buffering it (the connection handler answers 413 in turn);</li>
 *   <li>{@code connection}: answers the requests in order, as the {@link RequestRouter} decides
 *       once {@link BearerAuthentication} admits them (401 or 403 else), and holds the answers to GETs within the {@link ByteBudget} of answers of all connections
 *       until they are sent (503 when they do not fit; {@link ConnectionHandler}).</li>
 * </ol>
 */
final class GatewayChannelInitializer extends ChannelInitializer<Channel> {

    static final int IDLE_SECONDS = 300;
    static final int REFUSED_SECONDS = 10;
    static final int MAX_INITIAL_LINE = 16 * 1024;
    static final int MAX_HEADER_BYTES = 16 * 1024;
    static final int MAX_CHUNK_BYTES = 64 * 1024;

    private final Function<FullHttpRequest, Answer> router;
    private final Function<HttpRequest, FullHttpResponse> refusalBeforeBody;
    private final InFlightRequests inFlight;
    private final InFlightRequests arriving;
    private final RequestMetering metering;
    private final int maxValueBytes;
    private final ByteBudget bodyBudget;
    private final ByteBudget answerBudget;
    private final long rangePullBytes;
    private final BearerTokens tokens;
    private final ChannelGroup openChannels;
    private final ConnectionLimit connections;
    private final SslContext tls;

    /**
     * @param router       what answers each request ({@link RequestRouter#route} but in tests)
     * @param refusalBeforeBody the answer to a request that waits for {@code 100 Continue} and would
     *                     be refused whatever its body holds (a 4xx), or null to ask for the body
     *                     ({@link RequestRouter#refusalBeforeBody})
     * @param inFlight     the requests that arrived whole and are not answered yet
     * @param arriving     the requests whose body is still arriving
     * @param metering     counts the client operations answered
     * @param bodyBudget   the bytes of request bodies all connections may hold at once
     * @param answerBudget the bytes of answer bodies all connections may hold unsent at once
     * @param rangePullBytes the most one batch of a range may hold
     * @param tokens       the bearer tokens the node asks for, or null for none: a request without one that
     *                     allows it is answered 401 or 403, before its body is read
     * @param openChannels every accepted connection is added here, so shutdown can close them
     * @param connections  how many connections are served at once
     * @param tls          the HTTPS context, or null to serve plain HTTP
     */
    GatewayChannelInitializer(Function<FullHttpRequest, Answer> router,
                              Function<HttpRequest, FullHttpResponse> refusalBeforeBody, InFlightRequests inFlight,
                              InFlightRequests arriving,
                              RequestMetering metering, int maxValueBytes, ByteBudget bodyBudget,
                              ByteBudget answerBudget, long rangePullBytes, BearerTokens tokens,
                              ChannelGroup openChannels, ConnectionLimit connections, SslContext tls) {
        this.router = router;
        this.refusalBeforeBody = refusalBeforeBody;
        this.inFlight = inFlight;
        this.arriving = arriving;
        this.metering = metering;
        this.maxValueBytes = maxValueBytes;
        this.bodyBudget = bodyBudget;
        this.answerBudget = answerBudget;
        this.rangePullBytes = rangePullBytes;
        this.tokens = tokens;
        this.openChannels = openChannels;
        this.connections = connections;
        this.tls = tls;
    }

    @Override
    protected void initChannel(Channel ch) {
        ConnectionLimit.Admission admission = connections.admit();
        if (admission == ConnectionLimit.Admission.DROPPED) {
            ch.close();
            return;
        }
        boolean refused = admission == ConnectionLimit.Admission.REFUSED;
        ScheduledFuture<?> deadline = refused
                ? ch.eventLoop().schedule((Runnable) ch::close, REFUSED_SECONDS, TimeUnit.SECONDS)
                : null;
        ch.closeFuture().addListener(closed -> {
            connections.closed(admission);
            if (deadline != null) {
                deadline.cancel(false);
            }
        });
        openChannels.add(ch);
        ChannelPipeline p = ch.pipeline();
        if (tls != null) {
            p.addLast("tls", tls.newHandler(ch.alloc()));
        }
        p.addLast("idle", new IdleStateHandler(0, 0, IDLE_SECONDS, TimeUnit.SECONDS) {
            @Override
            protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) {
                ctx.close();
            }
        });
        BodyAdmissionHandler bodies = refused
                ? BodyAdmissionHandler.refusingEvery(new TooManyConnectionsException(connections.max()))
                : new BodyAdmissionHandler(bodyBudget, maxValueBytes, tokens, arriving);
        p.addLast("arrivals", bodies.arrivals());
        p.addLast("codec", new GatewayHttpCodec(new HttpDecoderConfig().setMaxInitialLineLength(MAX_INITIAL_LINE)
                .setMaxHeaderSize(MAX_HEADER_BYTES).setMaxChunkSize(MAX_CHUNK_BYTES)));
        p.addLast("keep-alive", new HttpServerKeepAliveHandler());
        p.addLast("body-admission", bodies);
        p.addLast("aggregator", new BodyLimit(maxValueBytes, metering, refusalBeforeBody, tokens));
        p.addLast("connection", new ConnectionHandler(router, tokens, inFlight, metering, answerBudget, rangePullBytes));
    }

    /**
     * The aggregator, with the plain-text 413 of docs/http-api.md instead of Netty's empty one, and which asks
     * for a body only when the request could be accepted with one.
     */
    private static final class BodyLimit extends HttpObjectAggregator {
        private final RequestMetering metering;
        private final Function<HttpRequest, FullHttpResponse> refusalBeforeBody;
        private final BearerTokens tokens;

        BodyLimit(int maxContentLength, RequestMetering metering, Function<HttpRequest, FullHttpResponse> refusalBeforeBody,
                  BearerTokens tokens) {
            super(maxContentLength, true);
            this.metering = metering;
            this.refusalBeforeBody = refusalBeforeBody;
            this.tokens = tokens;
        }

        /** Counts, and audits, a request answered here: the connection handler never sees it. */
        private void answeredHere(HttpRequest request, int status, ChannelPipeline pipeline) {
            metering.answered(metering.operations().apply(request), status, 0);
            AuditLog.answeredEarly(tokens, request, pipeline.channel().remoteAddress(), status);
        }

        /**
         * A request with {@code Expect: 100-continue} (curl sends it for large uploads) is refused
         * here rather than in {@link #handleOversizedMessage}, and Netty's refusals (413, 417) have
         * empty bodies. Replace them with plain-text ones; the status, and so Netty's decision to
         * close the connection afterwards, stays the same. Instead of a {@code 100 Continue}, a
         * request that would be refused whatever its body holds gets its refusal, and the
         * connection closes after it as after those, its body never read.
         */
        @Override
        protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
            String expectation = start.headers().get(HttpHeaderNames.EXPECT); // the aggregator removes it when it answers
            Object answer = super.newContinueResponse(start, maxContentLength, pipeline);
            if (answer instanceof HttpResponse proceed && proceed.status().equals(HttpResponseStatus.CONTINUE)
                    && start instanceof HttpRequest request) {
                FullHttpResponse refusal = refusalBeforeBody.apply(request);
                // Only a 4xx makes the aggregator close instead of waiting for the body.
                if (refusal == null || refusal.status().codeClass() != HttpStatusClass.CLIENT_ERROR) {
                    ReferenceCountUtil.release(refusal);
                    return answer;
                }
                ReferenceCountUtil.release(answer);
                HttpUtil.setKeepAlive(refusal, false);
                answeredHere(request, refusal.status().code(), pipeline);
                return refusal;
            }
            if (!(answer instanceof HttpResponse refusal)
                    || refusal.status().codeClass() != HttpStatusClass.CLIENT_ERROR) {
                return answer;
            }
            HttpResponseStatus status = refusal.status();
            ReferenceCountUtil.release(answer);
            FullHttpResponse text = status.equals(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE)
                    ? Responses.tooLarge(maxContentLength)
                    : Responses.text(status, "unsupported expectation '" + expectation
                            + "'; only 100-continue is supported");
            HttpUtil.setKeepAlive(text, false);
            // Answered here, before the connection handler sees the request: counted and audited here too.
            if (start instanceof HttpRequest request) {
                answeredHere(request, status.code(), pipeline);
            }
            return text;
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            // Once body bytes were consumed, or the client will not keep the connection, the rest
            // of the body cannot be told apart from the next request: answer and close. Otherwise
            // the aggregator discards the rest of the body and the connection lives on.
            boolean close = oversized instanceof FullHttpMessage
                    || (!HttpUtil.is100ContinueExpected(oversized) && !HttpUtil.isKeepAlive(oversized));
            if (!(oversized instanceof HttpRequest head)) {
                ctx.close(); // a server decodes only requests
                return;
            }
            // Requests before this one on the connection may still be in progress (pipelining), so
            // the 413 must not be written from here, ahead of their answers. It goes to the
            // connection handler, which answers requests in order, as a request that failed to decode.
            // With its headers, so that the connection handler knows whose token it carried (the audit log).
            FullHttpRequest refused = new DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri(),
                    Unpooled.EMPTY_BUFFER, head.headers().copy(), EmptyHttpHeaders.INSTANCE);
            HttpUtil.setKeepAlive(refused, !close);
            refused.setDecoderResult(DecoderResult.failure(new BodyTooLargeException(maxContentLength())));
            ctx.fireChannelRead(refused);
        }
    }
}
