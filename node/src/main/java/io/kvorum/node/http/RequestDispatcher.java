package io.kvorum.node.http;

import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.coordinator.Quorum;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Record;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.kvorum.node.util.Failures;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * The last stage of the HTTP pipeline: routes each aggregated request to the coordinator and writes
 * the answer. It does no blocking work: the coordinator's futures complete on storage threads and
 * their answers are written back on this channel's event loop.
 *
 * <p>Threading and lifecycle: one instance per connection; every field is confined to the
 * channel's event loop. Requests on one connection are answered in order (HTTP/1.1 pipelining):
 * while one is in progress, later ones wait in {@code queued} and reading from the socket pauses,
 * which also bounds the queue.
 */
final class RequestDispatcher extends ChannelInboundHandlerAdapter {

    private static final String ENTITY_METHODS = "GET, PUT, DELETE";

    private final GatewayContext gateway;
    private final ArrayDeque<FullHttpRequest> queued = new ArrayDeque<>();
    private boolean busy;
    private boolean keepAlive;
    private RangeResponder range;

    RequestDispatcher(GatewayContext gateway) {
        this.gateway = gateway;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (busy) {
            queued.add(request);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        start(ctx, request);
    }

    private void start(ChannelHandlerContext ctx, FullHttpRequest request) {
        busy = true;
        gateway.requestStarted();
        keepAlive = HttpUtil.isKeepAlive(request);
        try {
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
            route(ctx, request);
        } catch (BadRequestException e) {
            respond(ctx, Responses.text(HttpResponseStatus.BAD_REQUEST, e.getMessage()));
        } catch (RuntimeException e) {
            respond(ctx, Responses.forFailure(e));
        } finally {
            request.release();
        }
    }

    private void route(ChannelHandlerContext ctx, FullHttpRequest request) {
        String uri = originForm(request.uri());
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        String rawQuery = q < 0 ? null : uri.substring(q + 1);
        HttpMethod method = request.method();
        switch (path) {
            case "/v0/entity" -> {
                if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.PUT) && !method.equals(HttpMethod.DELETE)) {
                    respond(ctx, Responses.methodNotAllowed(ENTITY_METHODS));
                    return;
                }
                entity(ctx, method, RequestParams.parse(rawQuery), request);
            }
            case "/v0/entities" -> {
                if (!method.equals(HttpMethod.GET)) {
                    respond(ctx, Responses.methodNotAllowed("GET"));
                    return;
                }
                range(ctx, RequestParams.parse(rawQuery));
            }
            case "/v0/status" -> {
                if (!method.equals(HttpMethod.GET)) {
                    respond(ctx, Responses.methodNotAllowed("GET"));
                    return;
                }
                respond(ctx, Responses.json(HttpResponseStatus.OK, gateway.statusJson()));
            }
            case "/v0/repair" -> {
                if (!method.equals(HttpMethod.POST)) {
                    respond(ctx, Responses.methodNotAllowed("POST"));
                    return;
                }
                answer(ctx, gateway.repair().thenApply(json -> Responses.json(HttpResponseStatus.OK, json)));
            }
            default -> respond(ctx, Responses.text(HttpResponseStatus.BAD_REQUEST, "unknown path '" + path
                    + "'; the API is /v0/entity, /v0/entities, /v0/status and /v0/repair"));
        }
    }

    /** The path-and-query part of an absolute-form target ({@code http://host/path?q}), which RFC 9112 requires servers to accept. */
    private static String originForm(String uri) {
        int scheme = uri.indexOf("://");
        if (scheme <= 0 || uri.startsWith("/")) {
            return uri;
        }
        int path = uri.indexOf('/', scheme + 3);
        int query = uri.indexOf('?', scheme + 3);
        if (path < 0 || (query >= 0 && query < path)) {
            return query < 0 ? "/" : "/" + uri.substring(query);
        }
        return uri.substring(path);
    }

    private void entity(ChannelHandlerContext ctx, HttpMethod method, RequestParams params, FullHttpRequest request) {
        byte[] key = params.key();
        Quorum quorum = params.quorum(gateway.replicationFactor(), gateway.clusterSize());
        if (params.has("ttl") && !method.equals(HttpMethod.PUT)) {
            throw new BadRequestException("ttl is only allowed on PUT");
        }
        Coordinator coordinator = gateway.coordinator();
        if (method.equals(HttpMethod.GET)) {
            answer(ctx, coordinator.get(key, quorum).thenApply(this::readAnswer));
        } else if (method.equals(HttpMethod.PUT)) {
            long ttl = params.ttlMillis();
            byte[] value = ByteBufUtil.getBytes(request.content());
            answer(ctx, coordinator.put(key, value, ttl, quorum)
                    .thenApply(written -> Responses.empty(HttpResponseStatus.CREATED)));
        } else {
            answer(ctx, coordinator.delete(key, quorum)
                    .thenApply(written -> Responses.empty(HttpResponseStatus.ACCEPTED)));
        }
    }

    private FullHttpResponse readAnswer(Record newest) {
        if (newest == null || newest.readsAsAbsentAt(gateway.clock().currentTimeMillis())) {
            return Responses.text(HttpResponseStatus.NOT_FOUND, "not found");
        }
        return Responses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(newest.value()),
                HttpHeaderValues.APPLICATION_OCTET_STREAM);
    }

    private void range(ChannelHandlerContext ctx, RequestParams params) {
        byte[] start = params.keyParam("start");
        byte[] end = params.optionalKeyParam("end");
        if (params.has("ttl")) {
            throw new BadRequestException("ttl is only allowed on PUT");
        }
        EntryStream stream = gateway.coordinator().range(start, end);
        range = new RangeResponder(ctx, stream, this);
        range.start();
    }

    /** Writes the future's answer, or the answer for its failure, on the event loop. */
    private void answer(ChannelHandlerContext ctx, CompletableFuture<FullHttpResponse> future) {
        future.whenCompleteAsync((response, error) ->
                respond(ctx, error == null ? response : Responses.forFailure(error)), ctx.executor());
    }

    /** Writes a complete answer to the request in progress. Event loop only. */
    void respond(ChannelHandlerContext ctx, FullHttpResponse response) {
        HttpUtil.setKeepAlive(response, keepAlive);
        ctx.writeAndFlush(response).addListener(f -> finished(ctx));
    }

    /** Begins a streamed answer (the headers). Event loop only. */
    void respondStreaming(ChannelHandlerContext ctx, HttpResponse head) {
        HttpUtil.setKeepAlive(head, keepAlive);
        ctx.write(head);
    }

    /** The request in progress is answered; start the next queued one. Event loop only. */
    void finished(ChannelHandlerContext ctx) {
        if (!busy) {
            return;
        }
        busy = false;
        range = null;
        gateway.requestFinished();
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
        if (range != null) {
            range.abort();
        }
        if (busy) {
            busy = false;
            gateway.requestFinished();
        }
        FullHttpRequest r;
        while ((r = queued.poll()) != null) {
            r.release();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Connection resets and the like: the client is gone; there is nobody to answer.
        Throwable t = Failures.unwrap(cause);
        GatewayContext.log.debug("closing connection {} after {}", ctx.channel().remoteAddress(), t.toString());
        ctx.close();
    }
}
