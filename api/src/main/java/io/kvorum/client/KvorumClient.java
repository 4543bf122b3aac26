package io.kvorum.client;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.client.placement.ReplicaRouter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;

/**
 * A driver for a Kvorum cluster's HTTP API (docs/http-api.md): any node coordinates any request, so the
 * client spreads requests over the endpoints it was given, fails over when one is down and
 * retries what may be retried. Thread-safe; share one instance per process and close it.
 *
 * <pre>{@code
 * try (KvorumClient kv = KvorumClient.builder()
 *         .endpoints(URI.create("http://10.0.0.1:8080"), URI.create("http://10.0.0.2:8080"))
 *         .requestTimeout(Duration.ofSeconds(2))
 *         .build()) {
 *     kv.put("user:1", "Ada".getBytes(UTF_8)).join();                  // asynchronous
 *     Optional<byte[]> v = kv.sync().get("user:1");                     // blocking
 *     kv.put("otp:7", code, Options.quorum(2, 3).withTtl(Duration.ofMinutes(5))
 *             .withTimeout(Duration.ofMillis(300))).join();
 * }
 * }</pre>
 *
 * <h2>Calls</h2>
 * Every operation exists as an asynchronous method returning a {@link CompletableFuture}, and as
 * a blocking one on the {@link #sync()} view. A call has a deadline, {@link Options#timeout()} or
 * else the builder's {@link Builder#requestTimeout request timeout}, that covers all its attempts
 * and the backoff between them. How calls are retried is described in {@link RetryPolicy};
 * {@link #create(URI)} clients do not retry.
 *
 * <h2>Failures</h2>
 * A future completes exceptionally with
 * <ul>
 *   <li>a {@link KvorumException} when a node refused the call: {@link BadRequestException} (400, 405,
 *       413), {@link UnauthorizedException} (401), {@link ForbiddenException} (403: the token's role does not
 *       allow the call), {@link OverloadedException} (503, after retries; or
 *       refused locally when the client's pending-request bound is reached), {@link NotEnoughReplicasException}
 *       (504), a plain {@code KvorumException} for other statuses;</li>
 *   <li>an {@link IOException} when no answer came: {@link java.net.ConnectException} when no
 *       connection could be made (the call had no effect; a failed TLS handshake is one too, and is
 *       not retried: an untrusted certificate fails the same way every time), {@link KvorumConnectionException}
 *       when the connection was lost with the request sent or queued, {@link KvorumTimeoutException}
 *       when the deadline passed (outcome unknown for both); {@link ResponseTooLargeException} when
 *       an answer was over {@link Builder#maxResponseBytes} (not retried).</li>
 * </ul>
 * A call that was retried fails with its last attempt's exception, the earlier attempts' (often
 * other nodes') attached as {@linkplain Throwable#getSuppressed() suppressed}. Cancelling a future
 * does not recall its request: a write already sent may still be stored.
 * The blocking methods throw the same exceptions: {@code KvorumException}s unchecked,
 * connection failures as the checked {@code IOException}s.
 *
 * <h2>Threads</h2>
 * I/O runs on the client's own Netty event loops ({@link Builder#ioThreads}, daemon threads named
 * {@code kvorum-client-*}). Futures complete on those event loops, unless the builder was given a
 * {@link Builder#callbackExecutor callback executor}, on which they then complete. Stages chained
 * onto a future without an executor run there too: they must not block, and never call
 * {@code join()} or a blocking method from them ({@link #sync()} refuses to run on an event loop).
 *
 * <h2>Transport</h2>
 * Each endpoint has a pool of up to {@link Builder#connectionsPerEndpoint} keep-alive HTTP/1.1
 * connections; requests go to the least busy one, pipelined once every connection is in use,
 * and at most {@link Builder#maxPendingPerConnection} wait on each. A node answers the requests
 * of one connection in order, so a request whose deadline passes while it waits closes its
 * connection: the requests queued behind it fail with {@link KvorumConnectionException} and are
 * retried as the policy allows. The node it waited for is then probed ({@code GET /v0/status}) and,
 * when that gets no answer in time either (a node that hangs rather than refuses connections), it
 * is skipped like a node that is down until a probe answers. A range ({@link #range}) holds one of
 * the pool's connections until its answer ended (or it is closed), and no other request is queued
 * there meanwhile; while every connection to a node is held by a range, a call to it fails at once
 * with a local {@link OverloadedException}.
 *
 * <h2>Membership</h2>
 * A client built with {@link Builder#routeToReplicas()} follows the cluster's membership (docs/operations.md#growing-and-shrinking-a-cluster):
 * every {@link Builder#membershipRefreshInterval} it reads {@code GET /v0/cluster} from one of its
 * nodes and, when the epoch is newer, routes over that membership's normal members from the next
 * attempt on (a retry included). Other clients keep the endpoints they were given.
 */
public final class KvorumClient implements AutoCloseable {

    static final System.Logger LOG = System.getLogger(KvorumClient.class.getName());

    private final ClientSettings settings;
    private final EventLoopGroup group;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<Call<?, ?>> live = ConcurrentHashMap.newKeySet();
    private final BlockingKvorumClient sync = new BlockingKvorumClient(this);
    /** Where requests go now; replaced whole when a routing client adopts a newer membership. */
    private volatile Routing routing;
    /** Endpoints of members that left the routing, closed one request timeout later; guarded by this. */
    private final Set<Endpoint> retiring = new HashSet<>();
    /** The next membership refresh of a routing client, or null; guarded by this. */
    private ScheduledFuture<?> refresh;

    /**
     * The endpoints of a client and how an attempt chooses among them, as one value so that an
     * attempt never sees the endpoints of one membership with the selector of another.
     *
     * @param view the membership the endpoints are the normal members of, or null when the client
     *             keeps the endpoints it was given
     */
    record Routing(List<Endpoint> endpoints, EndpointSelector selector, ClusterView view) {
    }

    private KvorumClient(ClientSettings settings, ClusterView view) {
        this.settings = settings;
        this.group = new NioEventLoopGroup(settings.ioThreads(), new DefaultThreadFactory("kvorum-client", true));
        List<Endpoint> list = new ArrayList<>();
        for (URI uri : settings.endpoints()) {
            list.add(new Endpoint(uri, group, settings));
        }
        this.routing = new Routing(List.copyOf(list), settings.selector(), view);
        if (view != null) {
            scheduleRefresh();
        }
    }

    /** A builder with the defaults of each of its options. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A client of the node at {@code baseUri} (e.g. {@code http://127.0.0.1:8080}) with a 30 s
     * request timeout. Shortcut for {@code builder().endpoints(baseUri).retryPolicy(RetryPolicy.NONE).build()}:
     * each call is exactly one request, as tests that count answers expect.
     */
    public static KvorumClient create(URI baseUri) {
        return create(baseUri, Builder.DEFAULT_REQUEST_TIMEOUT);
    }

    /** As {@link #create(URI)}, with calls failing with {@link KvorumTimeoutException} after {@code requestTimeout}. */
    public static KvorumClient create(URI baseUri, Duration requestTimeout) {
        return builder().endpoints(baseUri).requestTimeout(requestTimeout).retryPolicy(RetryPolicy.NONE).build();
    }

    /** The first endpoint, without a trailing slash. */
    public URI baseUri() {
        return routing.endpoints().get(0).uri();
    }

    /**
     * The endpoints requests go to: in the order given to the builder; for a client that
     * {@linkplain Builder#routeToReplicas routes to replicas}, the normal members of the newest
     * membership it read, by id.
     */
    public List<URI> endpoints() {
        return routing.endpoints().stream().map(Endpoint::uri).toList();
    }

    /** The membership a client that routes to replicas follows (the newest epoch it read); empty for other clients. */
    public Optional<ClusterView> membership() {
        return Optional.ofNullable(routing.view());
    }

    /** The blocking view of this client: the same operations, waiting for their outcome. */
    public BlockingKvorumClient sync() {
        return sync;
    }

    /** The value of a key, or empty when it is absent, deleted or expired. */
    public CompletableFuture<Optional<byte[]>> get(String key) {
        return get(key, Options.DEFAULT);
    }

    public CompletableFuture<Optional<byte[]>> get(String key, Options options) {
        return get(utf8(key), options);
    }

    /** As {@link #get(String, Options)}, for a key given as its UTF-8 bytes. */
    public CompletableFuture<Optional<byte[]>> get(byte[] key, Options options) {
        return entity(HttpMethod.GET, key, null, options, r -> switch (r.status()) {
            case 200 -> Optional.of(r.body());
            case 404 -> Optional.empty();
            default -> throw r.refusal();
        });
    }

    public CompletableFuture<Void> put(String key, byte[] value) {
        return put(key, value, Options.DEFAULT);
    }

    public CompletableFuture<Void> put(String key, byte[] value, Options options) {
        return put(utf8(key), value, options);
    }

    /**
     * Writes a value; completes once {@code ack} replicas stored it. The array is sent as it is
     * when the request is written (and again on a retry): do not change it before the future completes.
     */
    public CompletableFuture<Void> put(byte[] key, byte[] value, Options options) {
        Objects.requireNonNull(value, "value");
        return entity(HttpMethod.PUT, key, value, options, r -> expect(r, 201));
    }

    public CompletableFuture<Void> delete(String key) {
        return delete(key, Options.DEFAULT);
    }

    public CompletableFuture<Void> delete(String key, Options options) {
        return delete(utf8(key), options);
    }

    /** Deletes a key (writes a tombstone); completes once {@code ack} replicas stored it. */
    public CompletableFuture<Void> delete(byte[] key, Options options) {
        return entity(HttpMethod.DELETE, key, null, options, r -> expect(r, 202));
    }

    /**
     * The entries with {@code start <= key < end} ({@code end == null}: to the last key), read
     * while the node streams them. Blocks until the node answered the request (the request timeout
     * bounds the wait, retries included); close the reader to stop early.
     *
     * @throws KvorumException when the node refuses the range (400, 503, 504)
     * @throws IOException when no node could be reached in time
     */
    public RangeReader range(String start, String end) throws IOException {
        return range(start, end, settings.requestTimeout());
    }

    /**
     * As {@link #range(String, String)}, with {@code timeout} instead of the request timeout: for
     * the node's answer (retries included) and then for each entry.
     */
    public RangeReader range(String start, String end, Duration timeout) throws IOException {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive");
        }
        StringBuilder target = new StringBuilder("/v0/entities?start=").append(encode(utf8(start)));
        if (end != null) {
            target.append("&end=").append(encode(utf8(end)));
        }
        int maxEntry = Endpoint.maxRangeEntryBytes(settings);
        Call<RangeReader, RangeReader> call = call(null, timeout, "range", "range",
                e -> RangeReader.open(e, target.toString(), maxEntry, timeout), Function.identity());
        return BlockingKvorumClient.await(this, call.result);
    }

    /** The membership as a node (the one the selector picks) describes it: {@code GET /v0/cluster}, docs/operations.md#growing-and-shrinking-a-cluster. */
    public CompletableFuture<ClusterView> cluster() {
        ensureOpen();
        Call<Response, ClusterView> call = call(null, settings.requestTimeout(), null, "GET /v0/cluster",
                e -> e.send(new Exchange(HttpMethod.GET, "/v0/cluster", null)), r -> {
                    if (r.status() != 200) {
                        throw r.refusal();
                    }
                    return ClusterView.parse(new String(r.body(), StandardCharsets.UTF_8));
                });
        return deliver(call.result);
    }

    /**
     * Whether a node (the one the selector picks) answers {@code GET /v0/status} with 200. The
     * status needs no token (docs/operations.md#security): true says a node serves, not that this client's
     * {@linkplain Builder#bearerToken token} is valid; a call with a bad one fails with {@link UnauthorizedException}.
     */
    public CompletableFuture<Boolean> isReady() {
        ensureOpen();
        Call<Response, Boolean> call = call(null, settings.requestTimeout(), null, "GET /v0/status",
                e -> e.send(new Exchange(HttpMethod.GET, "/v0/status", null)), r -> r.status() == 200);
        return deliver(call.result.handle((ready, error) -> error == null && ready));
    }

    private <T> CompletableFuture<T> entity(HttpMethod method, byte[] key, byte[] body, Options options,
                                            Function<Response, T> outcome) {
        Objects.requireNonNull(key, "key");
        String target = entityTarget(key, options, method == HttpMethod.PUT);
        ensureOpen();
        Duration timeout = options.timeout() != null ? options.timeout() : settings.requestTimeout();
        return deliver(call(key, timeout, method.name().toLowerCase(Locale.ROOT), method + " " + "/v0/entity",
                e -> e.send(new Exchange(method, target, body)), outcome).result);
    }

    /** @param operation get, put, delete or range, as the call is reported (docs/java-client.md#metrics-and-traces); null: not reported */
    private <R, T> Call<R, T> call(byte[] key, Duration timeout, String operation, String what, Call.Attempt<R> attempt,
                                   Function<R, T> outcome) {
        ensureOpen();
        Call<R, T> call;
        try {
            call = new Call<>(this, key, timeout, operation, what, attempt, outcome);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the client is closed", e);
        }
        live.add(call);
        call.result.whenComplete((v, e) -> live.remove(call));
        return call.start();
    }

    /** The future the caller gets: completed on the callback executor when there is one. */
    private <T> CompletableFuture<T> deliver(CompletableFuture<T> internal) {
        Executor executor = settings.callbackExecutor();
        if (executor == null) {
            return internal;
        }
        CompletableFuture<T> external = new CompletableFuture<>();
        internal.whenComplete((v, e) -> {
            Runnable complete = () -> {
                if (e == null) {
                    external.complete(v);
                } else {
                    external.completeExceptionally(e); // already a CompletionException
                }
            };
            try {
                executor.execute(complete);
            } catch (RejectedExecutionException rejected) {
                complete.run();
            }
        });
        return external;
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the client is closed");
        }
    }

    boolean isClosed() {
        return closed.get();
    }

    ClientSettings settings() {
        return settings;
    }

    EventLoopGroup group() {
        return group;
    }

    Routing routing() {
        return routing;
    }

    /** Reads the membership again after the refresh interval, unless the client is closed. */
    private synchronized void scheduleRefresh() {
        if (closed.get()) {
            return;
        }
        try {
            refresh = group.schedule(this::refreshMembership, settings.membershipRefreshInterval().toNanos(),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing: no more refreshes
        }
    }

    private void refreshMembership() {
        if (closed.get()) {
            return;
        }
        CompletableFuture<ClusterView> read;
        try {
            read = cluster();
        } catch (IllegalStateException closing) {
            return;
        }
        read.whenComplete((view, error) -> {
            if (error == null) {
                adopt(view);
            } else {
                LOG.log(System.Logger.Level.DEBUG, () -> "membership refresh failed, keeping epoch "
                        + routing.view().epoch() + ": " + Call.unwrap(error));
            }
            scheduleRefresh();
        });
    }

    /**
     * Routes by {@code view} when it is newer than the membership followed: a member that became
     * normal gets a pool; one that is no longer normal gets no new attempt, and its connections
     * close one request timeout later, when the calls already sent to it have had their answers.
     * An older or equal epoch, or a view without a normal member, changes nothing.
     */
    private synchronized void adopt(ClusterView view) {
        Routing current = routing;
        if (closed.get() || view.epoch() <= current.view().epoch()) {
            return;
        }
        String scheme = current.endpoints().get(0).uri().getScheme();
        ReplicaRouter router;
        try {
            router = ReplicaRouter.of(view, scheme);
        } catch (IllegalArgumentException noNormalMember) {
            return;
        }
        Map<URI, Endpoint> existing = new HashMap<>();
        current.endpoints().forEach(e -> existing.put(e.uri(), e));
        List<Endpoint> next = new ArrayList<>();
        for (URI uri : normalMembers(view, scheme)) {
            Endpoint kept = existing.remove(uri);
            next.add(kept != null ? kept : new Endpoint(uri, group, settings));
        }
        routing = new Routing(List.copyOf(next), EndpointSelector.replicasFirst(router), view);
        LOG.log(System.Logger.Level.INFO, () -> "following membership epoch " + view.epoch() + " (was "
                + current.view().epoch() + "): " + endpoints());
        Set<Endpoint> left = Set.copyOf(existing.values());
        if (left.isEmpty()) {
            return;
        }
        retiring.addAll(left);
        try {
            group.schedule(() -> retire(left), settings.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            retire(left);
        }
    }

    private void retire(Set<Endpoint> left) {
        synchronized (this) {
            retiring.removeAll(left);
        }
        left.forEach(Endpoint::close);
    }

    /** The HTTP endpoints of {@code view}'s normal members, by id. */
    static List<URI> normalMembers(ClusterView view, String scheme) {
        return view.members().stream().filter(ClusterView.Member::isNormal).map(m -> m.httpUri(scheme)).toList();
    }

    boolean inEventLoop() {
        for (EventExecutor e : group) {
            if (e.inEventLoop()) {
                return true;
            }
        }
        return false;
    }

    private static String entityTarget(byte[] key, Options options, boolean allowTtl) {
        Objects.requireNonNull(options, "options");
        StringBuilder uri = new StringBuilder("/v0/entity?id=").append(encode(key));
        if (options.from() > 0) {
            uri.append("&from=").append(options.from());
        }
        if (options.ack() > 0) {
            uri.append("&ack=").append(options.ack());
        }
        if (options.ttl() != null) {
            if (!allowTtl) {
                throw new IllegalArgumentException("ttl applies to put only");
            }
            uri.append("&ttl=").append(options.ttl().toMillis());
        }
        return uri.toString();
    }

    private static Void expect(Response r, int status) {
        if (r.status() != status) {
            throw r.refusal();
        }
        return null;
    }

    /**
     * A key as the UTF-8 bytes the node stores. A string that is not well-formed UTF-16 (a lone
     * surrogate) has no such bytes: {@code String.getBytes} would quietly store a {@code '?'} in
     * its place, and two different keys would be one.
     */
    static byte[] utf8(String key) {
        Objects.requireNonNull(key, "key");
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("a key must be well-formed UTF-16: a lone surrogate at index " + i);
            }
        }
        return key.getBytes(StandardCharsets.UTF_8);
    }

    /** Percent-encodes every byte that is not unreserved, so any key bytes survive the trip. */
    static String encode(byte[] key) {
        StringBuilder sb = new StringBuilder(key.length * 3);
        for (byte b : key) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || c == '.' || c == '~') {
                sb.append((char) c);
            } else {
                sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return sb.toString();
    }

    /**
     * Closes every connection and stops the event loops, waiting for them at most the builder's
     * close timeout (not at all when called on one of them). Calls still in progress fail with
     * {@link KvorumConnectionException}; later calls throw {@link IllegalStateException}.
     * Open {@link RangeReader}s end with {@link RangeReader.TruncatedRangeException}. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<Endpoint> open;
        synchronized (this) { // no adopt() after this: it checks closed under the same lock
            if (refresh != null) {
                refresh.cancel(false);
            }
            open = new ArrayList<>(routing.endpoints());
            open.addAll(retiring);
            retiring.clear();
        }
        open.forEach(Endpoint::close);
        KvorumConnectionException gone = new KvorumConnectionException(Call.CLIENT_CLOSED);
        live.forEach(c -> c.fail(gone));
        long timeout = settings.closeTimeout().toMillis();
        io.netty.util.concurrent.Future<?> terminated = group.shutdownGracefully(0, timeout, TimeUnit.MILLISECONDS);
        if (!inEventLoop()) {
            terminated.awaitUninterruptibly(timeout + 1000);
        }
    }

    /**
     * Per-call options. {@code ack}/{@code from} of 0 mean the node's defaults ({@code from} =
     * replication factor, {@code ack} = a majority of {@code from}); a null {@code ttl} means no
     * expiry; a null {@code timeout} means the client's request timeout.
     */
    public record Options(int ack, int from, Duration ttl, Duration timeout) {
        public static final Options DEFAULT = new Options(0, 0, null, null);

        public Options {
            if (ack < 0 || from < 0) {
                throw new IllegalArgumentException("ack and from must be positive, or 0 for the default");
            }
            if (ack > 0 && from > 0 && ack > from) {
                throw new IllegalArgumentException("ack=" + ack + " is more than from=" + from);
            }
            if (ttl != null && ttl.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("ttl must be at least 1 ms (the node counts it in whole milliseconds), got " + ttl);
            }
            if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
                throw new IllegalArgumentException("timeout must be positive");
            }
        }

        public Options(int ack, int from, Duration ttl) {
            this(ack, from, ttl, null);
        }

        /** Ask {@code from} replicas, succeed once {@code ack} answered. */
        public static Options quorum(int ack, int from) {
            return new Options(ack, from, null, null);
        }

        /** The value expires {@code ttl} (at least 1 ms; counted in whole milliseconds) after the node receives the write. */
        public Options withTtl(Duration ttl) {
            return new Options(ack, from, ttl, timeout);
        }

        /**
         * The call fails with {@link KvorumTimeoutException} once {@code timeout} passed, retries
         * included. A timeout of a century or more is taken as a century ("no timeout").
         */
        public Options withTimeout(Duration timeout) {
            return new Options(ack, from, ttl, Objects.requireNonNull(timeout, "timeout"));
        }

        @Override
        public String toString() {
            return "Options{ack=" + ack + ", from=" + from + (ttl != null ? ", ttl=" + ttl : "")
                    + (timeout != null ? ", timeout=" + timeout : "") + "}";
        }
    }

    /** Bytes as a readable string for messages. */
    static String preview(byte[] body) {
        String s = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8).strip();
        return body.length > 200 ? s + "..." : s;
    }

    /** Builds a {@link KvorumClient}; every option has a default except the endpoints. Not thread-safe. */
    public static final class Builder {

        static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
        static final Duration DEFAULT_MEMBERSHIP_REFRESH = Duration.ofSeconds(10);

        private List<URI> endpoints = List.of();
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private int connectionsPerEndpoint = 4;
        private int maxPendingPerConnection = 1024;
        private int ioThreads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
        private Executor callbackExecutor;
        private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
        private EndpointSelector selector = EndpointSelector.roundRobin();
        private Supplier<String> bearerToken;
        private Duration probeInterval = Duration.ofSeconds(1);
        private int maxResponseBytes = 16 * 1024 * 1024;
        private Duration closeTimeout = Duration.ofSeconds(2);
        private boolean routeToReplicas;
        private Duration membershipRefreshInterval = DEFAULT_MEMBERSHIP_REFRESH;
        private SslContext tls;
        private boolean allowInsecure;
        /** A Micrometer MeterRegistry and an OpenTelemetry, or null: typed Object so that neither library need be present. */
        private Object meterRegistry;
        private Object openTelemetry;

        private Builder() {
        }

        /**
         * The nodes to talk to, {@code http://host:port} or {@code https://host:port}, at least one,
         * each once. Without a port, 80 and 443, as in any URL (a node listens on 8080 by default).
         *
         * @throws IllegalArgumentException for another scheme, a path, a query or fragment, user
         *                                  info (the client authenticates with {@link #bearerToken}),
         *                                  port 0, or an endpoint given twice
         */
        public Builder endpoints(URI... endpoints) {
            return endpoints(Arrays.asList(endpoints));
        }

        public Builder endpoints(List<URI> endpoints) {
            List<URI> normalized = new ArrayList<>();
            for (URI uri : endpoints) {
                URI n = normalize(uri);
                if (normalized.contains(n)) {
                    throw new IllegalArgumentException("endpoint " + n + " is given twice");
                }
                normalized.add(n);
            }
            this.endpoints = List.copyOf(normalized);
            return this;
        }

        /** How long establishing a connection may take (default 5 s). */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = positive(connectTimeout, "connectTimeout");
            return this;
        }

        /** The deadline of calls whose {@link Options} name none, attempts included (default 30 s). */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = positive(requestTimeout, "requestTimeout");
            return this;
        }

        /** Keep-alive connections per endpoint, at most (default 4). */
        public Builder connectionsPerEndpoint(int connections) {
            this.connectionsPerEndpoint = atLeastOne(connections, "connectionsPerEndpoint");
            return this;
        }

        /** Requests sent or queued on one connection, at most, before calls fail fast with a local {@link OverloadedException} (default 1024). */
        public Builder maxPendingPerConnection(int pending) {
            this.maxPendingPerConnection = atLeastOne(pending, "maxPendingPerConnection");
            return this;
        }

        /** Event-loop threads doing the client's I/O (default: the processors, at most 4). */
        public Builder ioThreads(int threads) {
            this.ioThreads = atLeastOne(threads, "ioThreads");
            return this;
        }

        /** Where futures complete (default: on the event loop that received the answer). Not shut down by the client. */
        public Builder callbackExecutor(Executor executor) {
            this.callbackExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** How calls are retried (default {@link RetryPolicy#DEFAULT}). */
        public Builder retryPolicy(RetryPolicy policy) {
            this.retryPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Which endpoint coordinates each attempt (default {@link EndpointSelector#roundRobin()}). */
        public Builder endpointSelector(EndpointSelector selector) {
            this.selector = Objects.requireNonNull(selector, "selector");
            return this;
        }

        /**
         * Sent as {@code Authorization: Bearer <token>} with every request but {@code GET
         * /v0/status} (which needs none, docs/operations.md#security); never logged. For a token that changes while the
         * client runs, see {@link #bearerTokenFile} and {@link #bearerToken(Supplier)}.
         */
        public Builder bearerToken(String token) {
            if (!BearerTokens.isValid(token)) {
                throw new IllegalArgumentException("a bearer token is printable ASCII without spaces");
            }
            this.bearerToken = () -> token;
            return this;
        }

        /**
         * Sends the token that {@code tokens} gives as each request is sent, so that a rotated or
         * short-lived token needs no new client. It is called for every request, on the caller's
         * thread or on one of the client's event loops: it must be quick and never block (return a
         * token kept in memory, refreshed elsewhere). A call for which it throws, or gives null or
         * anything but printable ASCII without spaces, fails without being sent (with its
         * exception, or an {@link IllegalStateException} that does not quote what it gave).
         */
        public Builder bearerToken(Supplier<String> tokens) {
            this.bearerToken = Objects.requireNonNull(tokens, "tokens");
            return this;
        }

        /**
         * Sends the token held in {@code file}: its one non-blank line, printable ASCII without
         * spaces. The file is read again at most once a second, as requests are sent, so a token
         * rotated by replacing the file is sent from about a second later, with no new client. While
         * the file is missing, unreadable or holds no single valid token, the token read before is
         * sent, as a node keeps its tokens while its token file is rewritten. Replace the file
         * atomically (write another file, then rename it over this one) so that a half-written
         * token is never read.
         *
         * @throws IllegalArgumentException when the file cannot be read now or does not hold exactly
         *                                  one valid token (the message names the file, never its content)
         */
        public Builder bearerTokenFile(Path file) {
            this.bearerToken = BearerTokens.fromFile(Objects.requireNonNull(file, "file"));
            return this;
        }

        /**
         * For {@code https://} endpoints: trust the CA certificates of this PEM file alone (the
         * {@code ca.pem} of {@code ./kvorum certs}, or the cluster's {@code --tls-ca}); the host of
         * each endpoint must be named by its node's certificate. Without it, {@code https://}
         * endpoints are checked against the JDK's default trust store. The file is read again at a
         * handshake when it was last read a second or more before, so a cluster moving to another CA
         * (both CAs in the file, then the new one alone) needs no new client; a file missing or
         * unreadable for a moment keeps the trust read before.
         *
         * @throws IllegalArgumentException when the file cannot be read or holds no PEM certificate
         */
        public Builder trustCertificates(Path caPem) {
            Objects.requireNonNull(caPem, "caPem");
            try {
                this.tls = clientContext(SslContextBuilder.forClient().trustManager(TrustedCa.following(caPem)));
            } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalArgumentException("cannot trust the certificates of " + caPem
                        + ": not a readable PEM file of certificates", e);
            }
            return this;
        }

        private static SslContext clientContext(SslContextBuilder builder) throws SSLException {
            return builder.protocols("TLSv1.3", "TLSv1.2").build();
        }

        /**
         * Lets the bearer token go to plain {@code http://} endpoints beyond loopback: without it,
         * {@link #build()} refuses a token with such an endpoint, and a request to a member that
         * joined at such an address fails unsent, as anyone on the network could read the token
         * (docs/operations.md#security). For a trusted network only, such as a private link between
         * the client and the cluster; {@code https://} endpoints need nothing of the kind.
         */
        public Builder allowInsecure() {
            this.allowInsecure = true;
            return this;
        }

        /**
         * Records the client's meters in {@code registry} (docs/java-client.md#metrics-and-traces): a timer of
         * calls ({@code kvorum.client.requests}, by operation, outcome and endpoint), a counter of
         * retries ({@code kvorum.client.retries}) and gauges of each node's pool
         * ({@code kvorum.client.pool.*}). Micrometer is an optional dependency of the driver: without
         * this call, the client needs no Micrometer on the class path.
         */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            this.meterRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Reports a span per call ({@code kvorum get}, {@code kvorum put}, ...) to {@code openTelemetry}'s
         * tracer, as a child of the span current where the call was made (docs/java-client.md#metrics-and-traces).
         * OpenTelemetry's API is an optional dependency of the driver: without this call, the client
         * needs none on the class path.
         */
        public Builder openTelemetry(io.opentelemetry.api.OpenTelemetry openTelemetry) {
            this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
            return this;
        }

        /** How often an endpoint that is down is probed with {@code GET /v0/status} (default 1 s). */
        public Builder probeInterval(Duration interval) {
            this.probeInterval = positive(interval, "probeInterval");
            return this;
        }

        /** The largest value (or range entry value) accepted in an answer (default 16 MiB). */
        public Builder maxResponseBytes(int bytes) {
            this.maxResponseBytes = atLeastOne(bytes, "maxResponseBytes");
            return this;
        }

        /** How long {@link #close()} waits for the event loops to stop (default 2 s). */
        public Builder closeTimeout(Duration timeout) {
            this.closeTimeout = positive(timeout, "closeTimeout");
            return this;
        }

        /**
         * Sends each request with a key to one of the key's replicas ({@link EndpointSelector#replicasFirst}),
         * placing keys with the node's own code ({@link io.kvorum.client.placement.Rendezvous}). The
         * endpoints given become seeds: {@link #build()} asks them for the membership
         * ({@code GET /v0/cluster}) and the client then talks to every normal member. Replaces
         * any {@link #endpointSelector}. The client reads the membership again every
         * {@link #membershipRefreshInterval} and follows a newer epoch: it routes to a member once
         * it is normal, and stops sending to one that left or is leaving.
         */
        public Builder routeToReplicas() {
            this.routeToReplicas = true;
            return this;
        }

        /**
         * How often a client that {@link #routeToReplicas routes to replicas} reads the membership
         * from one of its nodes (default 10 s). Until it does, a change costs requests a hop, not
         * their outcome: any node coordinates any request. Other clients keep the endpoints they were given.
         */
        public Builder membershipRefreshInterval(Duration interval) {
            this.membershipRefreshInterval = positive(interval, "membershipRefreshInterval");
            return this;
        }

        /**
         * The client. With {@link #routeToReplicas()}, first reads the membership from the seeds
         * (each in turn until one answers, within the request timeout).
         *
         * @throws UncheckedIOException when routing to replicas and no seed could be reached
         * @throws KvorumException       when routing to replicas and a seed refused to describe the
         *                               membership ({@link UnauthorizedException} without a valid token)
         * @throws IllegalStateException when no endpoint was given, or a bearer token would go to a
         *                               plain {@code http://} endpoint (or, routing to replicas, member)
         *                               beyond loopback without {@link #allowInsecure()}
         */
        public KvorumClient build() {
            if (endpoints.isEmpty()) {
                throw new IllegalStateException("no endpoint given");
            }
            refuseTokenInClear(endpoints);
            if (!routeToReplicas) {
                return new KvorumClient(settings(endpoints, selector), null);
            }
            ClusterView view;
            try (KvorumClient seeds = new KvorumClient(seedSettings(), null)) {
                view = BlockingKvorumClient.await(seeds, seeds.cluster());
            } catch (IOException e) {
                throw new UncheckedIOException("no seed of " + endpoints + " described the cluster", e);
            }
            String scheme = endpoints.get(0).getScheme();
            List<URI> members = normalMembers(view, scheme);
            refuseTokenInClear(members);
            return new KvorumClient(settings(members, EndpointSelector.replicasFirst(ReplicaRouter.of(view, scheme))), view);
        }

        /** Throws {@link Endpoint#tokenInClear} for the first of {@code uris} a token may not be sent to. */
        private void refuseTokenInClear(List<URI> uris) {
            if (bearerToken == null || allowInsecure) {
                return;
            }
            for (URI uri : uris) {
                if (Endpoint.isPlainBeyondLoopback(uri)) {
                    throw Endpoint.tokenInClear(uri);
                }
            }
        }

        private ClientSettings settings(List<URI> endpoints, EndpointSelector selector) {
            return settings(endpoints, selector, retryPolicy, telemetry());
        }

        /**
         * Where the client reports its calls and pools. Each library's class is loaded here only when
         * its object was given, so that a client without them needs neither on the class path.
         */
        private Telemetry telemetry() {
            List<Telemetry> all = new ArrayList<>();
            if (meterRegistry != null) {
                all.add(MicrometerTelemetry.of(meterRegistry));
            }
            if (openTelemetry != null) {
                all.add(OpenTelemetryTracing.of(openTelemetry));
            }
            return Telemetry.of(all);
        }

        /**
         * The seeds' client: every seed gets its turn whatever the retry policy of the calls
         * ({@link RetryPolicy#NONE} included), each tried once before any is tried again.
         */
        private ClientSettings seedSettings() {
            RetryPolicy eachSeed = new RetryPolicy(Math.max(endpoints.size(), retryPolicy.maxAttempts()),
                    retryPolicy.baseBackoff(), retryPolicy.maxBackoff());
            return settings(endpoints, EndpointSelector.roundRobin(), eachSeed, Telemetry.NONE);
        }

        private ClientSettings settings(List<URI> endpoints, EndpointSelector selector, RetryPolicy retries,
                                        Telemetry telemetry) {
            return new ClientSettings(endpoints, connectTimeout, requestTimeout, connectionsPerEndpoint,
                    maxPendingPerConnection, ioThreads, callbackExecutor, retries, selector, bearerToken,
                    probeInterval, maxResponseBytes, closeTimeout, membershipRefreshInterval, tlsFor(endpoints),
                    allowInsecure, telemetry);
        }

        /** The builder's trust for {@code https} endpoints, or the JDK's default trust when none was given. */
        private SslContext tlsFor(List<URI> endpoints) {
            if (tls != null || endpoints.stream().noneMatch(Endpoint::isHttps)) {
                return tls;
            }
            try {
                return clientContext(SslContextBuilder.forClient());
            } catch (SSLException e) {
                throw new UncheckedIOException("cannot set up TLS with the JDK's default trust", e);
            }
        }

        private static URI normalize(URI uri) {
            Objects.requireNonNull(uri, "endpoint");
            if (uri.getRawUserInfo() != null) { // never echoed: it may hold a password
                throw new IllegalArgumentException("an endpoint carries no user info (user:password@); the client "
                        + "authenticates with bearerToken(...): " + uri.getScheme() + "://" + uri.getHost()
                        + (uri.getPort() >= 0 ? ":" + uri.getPort() : ""));
            }
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
                throw new IllegalArgumentException("an endpoint is http://host:port or https://host:port, not " + uri);
            }
            String path = uri.getRawPath();
            if (path != null && !path.isEmpty() && !path.equals("/") || uri.getRawQuery() != null
                    || uri.getRawFragment() != null) {
                throw new IllegalArgumentException("an endpoint has no path, query or fragment: " + uri);
            }
            if (uri.getPort() == 0) {
                throw new IllegalArgumentException("an endpoint's port is 1 to 65535: " + uri);
            }
            return URI.create(scheme + "://" + uri.getRawAuthority());
        }

        private static Duration positive(Duration d, String name) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive");
            }
            return d;
        }

        private static int atLeastOne(int n, String name) {
            if (n < 1) {
                throw new IllegalArgumentException(name + " must be at least 1");
            }
            return n;
        }
    }
}
