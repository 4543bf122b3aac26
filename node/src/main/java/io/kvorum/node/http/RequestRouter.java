package io.kvorum.node.http;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.antientropy.RepairReport;
import io.kvorum.node.backup.BackupCoordinator;
import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.coordinator.Quorum;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.model.Record;
import io.kvorum.node.time.Clock;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Which action answers a request (docs/http-api.md): by path and method, a call into the
 * coordinator, the node's status or membership, or an anti-entropy repair. A method a path does not
 * allow answers 405 with {@code Allow}; an unknown path, 400. Bad parameters throw a
 * {@link io.kvorum.node.error.RequestException}, which the connection answers as any failure.
 *
 * <p>Knows nothing of connections: {@link ConnectionHandler} decides when a request is routed and
 * how its answer is written. Stateless apart from what it calls into; one per gateway, shared by
 * every connection. {@link #route} does not block, and reads the request only before it returns.
 *
 * @param cluster the membership: {@code GET /v0/cluster}, its changes, and the bounds of {@code from}
 * @param status  the body of {@code GET /v0/status}
 * @param repair  runs {@code POST /v0/repair}; completes with the report whether or not every peer was
 *                reached (200, or 504 naming those that were not)
 * @param metrics the body of {@code GET /metrics}, in Prometheus' text format, rendered off the event loop
 *                ({@link NodeMetrics#scrapeAsync})
 */
record RequestRouter(Coordinator coordinator, ClusterAdmin cluster, Clock clock,
                     Supplier<NodeStatus> status,
                     Supplier<CompletableFuture<RepairReport>> repair,
                     Supplier<CompletableFuture<String>> metrics,
                     BackupCoordinator backups) {

    /** The path of one backup, {@code /v0/backup/<id>}, as the routes and the role table name it. */
    static final String BACKUP_BY_ID = "/v0/backup/ID";
    private static final String BACKUP_PREFIX = "/v0/backup/";

    private static final String ENTITY_METHODS = "GET, PUT, DELETE";
    private static final String GET_AND_HEAD = "GET, HEAD";

    /**
     * The client operation a request is, as {@code kvorum_requests_total} counts it: null for what
     * is not one (status, metrics, an unknown path or a method the path does not allow). Never throws.
     */
    static NodeMetrics.Op operationOf(HttpRequest request) {
        HttpMethod method = request.method();
        return switch (pathOf(originForm(request.uri()))) {
            case "/v0/entity" -> method.equals(HttpMethod.GET) ? NodeMetrics.Op.GET
                    : method.equals(HttpMethod.PUT) ? NodeMetrics.Op.PUT
                    : method.equals(HttpMethod.DELETE) ? NodeMetrics.Op.DELETE : null;
            case "/v0/entities" -> method.equals(HttpMethod.GET) ? NodeMetrics.Op.RANGE : null;
            case "/v0/repair" -> method.equals(HttpMethod.POST) ? NodeMetrics.Op.REPAIR : null;
            default -> null;
        };
    }

    Answer route(FullHttpRequest request) {
        String uri = originForm(request.uri());
        String path = pathOf(uri);
        String rawQuery = queryOf(uri, path);
        HttpMethod method = request.method();
        return switch (routeOf(path)) {
            case "/v0/entity" -> method.equals(HttpMethod.GET) || method.equals(HttpMethod.PUT)
                    || method.equals(HttpMethod.DELETE)
                    ? entity(method, RequestParams.parse(rawQuery), request)
                    : Answer.now(Responses.methodNotAllowed(ENTITY_METHODS));
            case "/v0/entities" -> !method.equals(HttpMethod.GET) ? Answer.now(Responses.methodNotAllowed("GET"))
                    // An HTTP/1.0 client cannot read chunks (RFC 9112 §6.1), and a range is framed by them.
                    : request.protocolVersion().equals(HttpVersion.HTTP_1_0)
                    ? Answer.now(Responses.text(HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED, "a range is streamed as "
                            + "HTTP/1.1 chunks, one entry each (docs/http-api.md (ranges)), which an HTTP/1.0 client cannot read: send it as HTTP/1.1"))
                    : range(RequestParams.parse(rawQuery));
            // HEAD too where it costs nothing, as health checks and load balancers probe with it;
            // the codec leaves the body out.
            case "/v0/status" -> isGetOrHead(method)
                    ? statusWhileMember()
                    : Answer.now(Responses.methodNotAllowed(GET_AND_HEAD));
            case "/v0/cluster" -> isGetOrHead(method)
                    ? Answer.now(Responses.json(HttpResponseStatus.OK, cluster.view()))
                    : Answer.now(Responses.methodNotAllowed(GET_AND_HEAD));
            case "/v0/cluster/leave" -> method.equals(HttpMethod.POST)
                    ? Answer.later(cluster.leave(RequestParams.parse(rawQuery).memberId()).thenApply(RequestRouter::accepted))
                    : Answer.now(Responses.methodNotAllowed("POST"));
            case "/v0/cluster/remove" -> method.equals(HttpMethod.POST)
                    ? Answer.later(cluster.remove(RequestParams.parse(rawQuery).memberId()).thenApply(RequestRouter::removed))
                    : Answer.now(Responses.methodNotAllowed("POST"));
            case "/v0/cleanup" -> method.equals(HttpMethod.POST)
                    ? Answer.later(cluster.cleanup().thenApply(dropped ->
                            Responses.json(HttpResponseStatus.OK, Map.of("dropped", dropped))))
                    : Answer.now(Responses.methodNotAllowed("POST"));
            case "/v0/repair" -> method.equals(HttpMethod.POST)
                    ? Answer.later(repair.get().thenApply(report ->
                            Responses.json(HttpResponseStatus.OK, RepairSummary.of(report.requireComplete()))))
                    : Answer.now(Responses.methodNotAllowed("POST"));
            case "/v0/backup" -> method.equals(HttpMethod.POST)
                    ? Answer.later(backups.start().thenApply(started -> Responses.json(HttpResponseStatus.ACCEPTED, started)))
                    : method.equals(HttpMethod.GET)
                    ? Answer.later(backups.list().thenApply(list -> Responses.json(HttpResponseStatus.OK, list)))
                    : Answer.now(Responses.methodNotAllowed("GET, POST"));
            case "/v0/backup/ID" -> method.equals(HttpMethod.GET)
                    ? Answer.later(backups.status(path.substring(BACKUP_PREFIX.length()))
                            .thenApply(s -> Responses.json(HttpResponseStatus.OK, s)))
                    : Answer.now(Responses.methodNotAllowed("GET"));
            case "/v0/restore" -> method.equals(HttpMethod.POST)
                    ? restore(RequestParams.parse(rawQuery), request)
                    : Answer.now(Responses.methodNotAllowed("POST"));
            case "/metrics" -> isGetOrHead(method)
                    ? Answer.later(metrics.get().thenApply(text -> Responses.bytes(HttpResponseStatus.OK,
                            Unpooled.copiedBuffer(text, StandardCharsets.UTF_8), NodeMetrics.CONTENT_TYPE)))
                    : Answer.now(Responses.methodNotAllowed(GET_AND_HEAD));
            default -> Answer.now(Responses.text(HttpResponseStatus.BAD_REQUEST, "unknown path '" + path
                    + "'; the API is /v0/entity, /v0/entities, /v0/status, /v0/cluster, /v0/cluster/leave, /v0/cluster/remove,"
                    + " /v0/cleanup, /v0/repair, /v0/backup, /v0/backup/<id>, /v0/restore and /metrics"));
        };
    }

    /**
     * 200 with the status while this node serves (docs/operations.md#starting-nodes: that is what ready means); 503 once it
     * left or was removed, as its entity requests are, so that load balancers and health checks
     * stop sending it clients.
     */
    private Answer statusWhileMember() {
        requireMember();
        return Answer.now(Responses.json(HttpResponseStatus.OK, status.get()));
    }

    private static boolean isGetOrHead(HttpMethod method) {
        return method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD);
    }

    /** A leave accepted: 202 with the membership of its first step; the records move in the background. */
    private static FullHttpResponse accepted(ClusterView membership) {
        return Responses.json(HttpResponseStatus.ACCEPTED, membership);
    }

    /** A member removed: 200 with the membership without it (docs/http-api.md: removed at once). */
    private static FullHttpResponse removed(ClusterView membership) {
        return Responses.json(HttpResponseStatus.OK, membership);
    }

    /**
     * The refusal of an entity write that its head decides alone (a bad {@code id}, {@code ack},
     * {@code from} or {@code ttl}: 400), or null. The gateway asks before it answers
     * {@code Expect: 100-continue}, so that a client is not asked for a body that would be refused
     * whatever it holds; everything else is decided when the request is routed, as without the
     * expectation (a node that is no member answers 503 then).
     */
    FullHttpResponse refusalBeforeBody(HttpRequest head) {
        String uri = originForm(head.uri());
        String path = pathOf(uri);
        if (!path.equals("/v0/entity") || !head.method().equals(HttpMethod.PUT) || !cluster.isMember()) {
            return null;
        }
        try {
            checkedWrite(RequestParams.parse(queryOf(uri, path)));
            return null;
        } catch (BadRequestException e) {
            return Responses.forFailure(e);
        }
    }

    /** The query of an origin-form target whose path is {@code path}; null when it has none. */
    private static String queryOf(String uri, String path) {
        return path.length() < uri.length() ? uri.substring(path.length() + 1) : null;
    }

    /** The path of an origin-form target: up to the query, if there is one. */
    /** The route of {@code path}: itself, or {@link #BACKUP_BY_ID} for the path of one backup. */
    static String routeOf(String path) {
        return path.startsWith(BACKUP_PREFIX) ? BACKUP_BY_ID : path;
    }

    static String pathOf(String uri) {
        int q = uri.indexOf('?');
        return q < 0 ? uri : uri.substring(0, q);
    }

    /** The path-and-query part of an absolute-form target ({@code http://host/path?q}), which RFC 9112 requires servers to accept. */
    static String originForm(String uri) {
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

    /** Client requests are a member's to answer: a node that left or was removed sends clients elsewhere. */
    private void requireMember() {
        if (!cluster.isMember()) {
            throw new NotAMemberException("this node is not a member of the cluster (it left, was removed, or is "
                    + "still waiting to join); send requests to a member: " + memberAddresses());
        }
    }

    private String memberAddresses() {
        return String.join(", ", cluster.view().members().stream().filter(ClusterView.Member::isNormal)
                .map(m -> m.httpUri("http").getAuthority()).toList());
    }

    private Answer entity(HttpMethod method, RequestParams params, FullHttpRequest request) {
        requireMember();
        if (method.equals(HttpMethod.PUT)) {
            Write write = checkedWrite(params);
            byte[] value = ByteBufUtil.getBytes(request.content());
            return Answer.later(coordinator.put(write.key(), value, write.ttlMillis(), write.quorum())
                    .thenApply(written -> Responses.empty(HttpResponseStatus.CREATED)));
        }
        byte[] key = params.key();
        Quorum quorum = quorum(params);
        if (params.has("ttl")) {
            throw new BadRequestException("ttl is only allowed on PUT");
        }
        if (method.equals(HttpMethod.GET)) {
            return Answer.later(coordinator.get(key, quorum).thenApply(this::readAnswer));
        }
        return Answer.later(coordinator.delete(key, quorum)
                .thenApply(written -> Responses.empty(HttpResponseStatus.ACCEPTED)));
    }

    /** What a PUT's parameters ask for, checked. */
    private record Write(byte[] key, Quorum quorum, long ttlMillis) {
    }

    private Write checkedWrite(RequestParams params) {
        return new Write(params.key(), quorum(params), params.ttlMillis()); // checked in this order
    }

    private Quorum quorum(RequestParams params) {
        return params.quorum(cluster.replicationFactor(), cluster.normalMembers());
    }

    private FullHttpResponse readAnswer(Record newest) {
        if (newest == null || newest.readsAsAbsentAt(clock.currentTimeMillis())) {
            return Responses.text(HttpResponseStatus.NOT_FOUND, "not found");
        }
        return Responses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(newest.value()),
                HttpHeaderValues.APPLICATION_OCTET_STREAM);
    }

    /**
     * {@code POST /v0/restore}: a batch of backed-up records, each written to its key's replicas
     * with its own timestamp ({@link RestoreIntake}); 200 with their number once a quorum of each
     * key's replicas stored every one.
     */
    private Answer restore(RequestParams params, FullHttpRequest request) {
        requireMember();
        Quorum quorum = quorum(params);
        if (params.has("ttl")) {
            throw new BadRequestException("ttl is only allowed on PUT");
        }
        var entries = RestoreIntake.decode(request.content());
        return Answer.later(RestoreIntake.load(coordinator, entries, quorum)
                .thenApply(restored -> Responses.json(HttpResponseStatus.OK, Map.of("restored", restored))));
    }

    private Answer range(RequestParams params) {
        requireMember();
        byte[] start = params.keyParam("start");
        byte[] end = params.optionalKeyParam("end");
        if (params.has("ttl")) {
            throw new BadRequestException("ttl is only allowed on PUT");
        }
        return new Answer.Streamed(coordinator.range(start, end));
    }
}
