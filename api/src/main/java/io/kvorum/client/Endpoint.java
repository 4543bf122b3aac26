package io.kvorum.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.NetUtil;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * One node: a bounded pool of keep-alive HTTP/1.1 connections to it, and its health.
 *
 * <p>Pool: a request goes to the connection with the fewest pending requests; a new connection is
 * opened while every open one is busy and the pool is below its size; on a full pool requests are
 * pipelined, up to {@code maxPendingPerConnection} per connection, beyond which the request fails
 * at once with a local {@link OverloadedException}. Closed connections leave the pool.
 *
 * <p>Health: an endpoint that refuses a connection, or answers {@code 503} with
 * {@code Retry-After: 0} (it is not a member, or its clock is off: another node serves now), is
 * marked down and probed with {@code GET /v0/status} every {@code probeInterval} until it answers
 * 200 (or a request to it gets another answer). One that left a call unanswered past its deadline
 * (a node that hangs: stopped, paused, cut off, which a refused connection never shows) is probed
 * at once, and marked down too unless its status answers within the probe's timeout: a node that
 * was only slow for that call stays up. Selection prefers healthy endpoints but still uses a down
 * one when no other is left.
 */
final class Endpoint {

    private final URI uri;
    private final String peer;
    private final ClientSettings settings;
    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    /** Host alone: what {@code GET /v0/status} carries, which needs no token (docs/operations.md#security). */
    private final HttpHeaders anonymous;
    /** The headers of the token last sent, kept while the token source gives the same one. */
    private volatile Authorized authorized;
    /** A token may not be sent here: plain HTTP beyond loopback, and the builder did not allow it. */
    private final boolean tokenRefused;
    private final List<Connection> connections = new ArrayList<>(); // guarded by this
    private volatile boolean healthy = true;
    private volatile boolean closed;
    private final AtomicBoolean suspectProbing = new AtomicBoolean();
    /** Stops reporting this pool's meters (docs/java-client.md#metrics-and-traces). */
    private final Runnable unreport;

    Endpoint(URI uri, EventLoopGroup group, ClientSettings settings) {
        this.uri = uri;
        this.peer = uri.getHost() + ":" + port(uri);
        this.settings = settings;
        this.group = group;
        this.anonymous = new DefaultHttpHeaders();
        anonymous.set(HttpHeaderNames.HOST, peer);
        this.tokenRefused = settings.bearerToken() != null && !settings.allowInsecure() && isPlainBeyondLoopback(uri);
        this.bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .remoteAddress(InetSocketAddress.createUnresolved(uri.getHost(), port(uri)))
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
                        settings.connectTimeout().toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        secure(ch);
                        ExchangeHandler exchanges = new ExchangeHandler(peer, settings.maxResponseBytes());
                        ch.pipeline()
                                .addLast("codec", wholeChunkCodec(maxRangeEntryBytes(settings) + 1))
                                .addLast("streams", exchanges.streams())
                                .addLast("aggregator", new HttpObjectAggregator(settings.maxResponseBytes()))
                                .addLast("exchanges", exchanges);
                    }
                });
        this.unreport = settings.telemetry().pool(peer, new Telemetry.PoolState() {
            @Override
            public int inUse() {
                return (int) pool().filter(Connection::inUse).count();
            }

            @Override
            public int idle() {
                return (int) pool().filter(c -> !c.inUse()).count();
            }

            @Override
            public int pending() {
                return pool().mapToInt(c -> c.pending.get()).sum();
            }
        });
    }

    /** The pool's connections now. */
    private synchronized java.util.stream.Stream<Connection> pool() {
        return List.copyOf(connections).stream();
    }

    static int port(URI uri) {
        return uri.getPort() > 0 ? uri.getPort() : isHttps(uri) ? 443 : 80;
    }

    static boolean isHttps(URI uri) {
        return "https".equalsIgnoreCase(uri.getScheme());
    }

    /**
     * Whether what is sent to {@code uri} crosses a network in clear: plain {@code http://} to a host
     * other than {@code localhost} or a loopback address. Names are not resolved: any other name counts as
     * beyond loopback.
     */
    static boolean isPlainBeyondLoopback(URI uri) {
        if (isHttps(uri)) {
            return false;
        }
        String host = uri.getHost();
        if (host.equalsIgnoreCase("localhost")) {
            return false;
        }
        byte[] ip = NetUtil.createByteArrayFromIpAddressString(host.startsWith("[") ? host.substring(1, host.length() - 1) : host);
        try {
            return ip == null || !InetAddress.getByAddress(ip).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return true; // not an address after all
        }
    }

    /**
     * The refusal to send a token to {@code uri} in clear ({@link #isPlainBeyondLoopback}), as the
     * builder and a request to such an endpoint throw it.
     */
    static IllegalStateException tokenInClear(URI uri) {
        return new IllegalStateException("refusing to send the bearer token over plain HTTP to " + uri
                + ", which is not a loopback address: anyone on the network could read it. Use https:// endpoints"
                + " (see trustCertificates), or call allowInsecure() on the builder to send it anyway"
                + " (docs/operations.md#security)");
    }

    /**
     * For an {@code https} endpoint, TLS first in the pipeline, checking that the node's
     * certificate names the host dialled (as a browser does), against the trust the builder was given.
     */
    void secure(SocketChannel ch) {
        if (isHttps(uri)) {
            ch.pipeline().addFirst("tls", tlsHandler(ch, settings.tls(), uri));
        }
    }

    /**
     * Why a request could not be written. A failed TLS handshake is a {@link ConnectException}
     * (no request reached the node) that {@link #isTlsRefusal} recognises: a certificate the
     * client does not trust fails the same way on every attempt.
     */
    static IOException sendFailure(String peer, Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof NotSslRecordException) { // its message is a hex dump of what came instead
                return tlsRefusal("TLS handshake with " + peer + " failed: it answered without TLS (a plain http:// node?)", cause);
            }
            if (t instanceof SSLException) {
                return tlsRefusal("TLS handshake with " + peer + " failed: " + t.getMessage(), cause);
            }
        }
        return new KvorumConnectionException("could not send to " + peer, cause);
    }

    private static ConnectException tlsRefusal(String message, Throwable cause) {
        ConnectException e = new ConnectException(message);
        e.initCause(cause);
        return e;
    }

    /** Whether {@code error} is a TLS handshake that failed ({@link #sendFailure}). */
    static boolean isTlsRefusal(Throwable error) {
        if (!(error instanceof ConnectException)) {
            return false;
        }
        for (Throwable t = error.getCause(); t != null; t = t.getCause()) {
            if (t instanceof SSLException) {
                return true;
            }
        }
        return false;
    }

    private static SslHandler tlsHandler(SocketChannel ch, SslContext tls, URI uri) {
        SslHandler handler = tls.newHandler(ch.alloc(), uri.getHost(), port(uri));
        SSLEngine engine = handler.engine();
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(parameters);
        return handler;
    }

    URI uri() {
        return uri;
    }

    /** Up, and not being probed after a call that got no answer in time (calls prefer others meanwhile). */
    boolean healthy() {
        return healthy && !suspectProbing.get();
    }

    /**
     * The headers a request to this node carries: Host, and Authorization with the token the
     * client's source gives now when it has one (asked once per request, never for a status
     * request). Shared: copy them, never change them.
     *
     * @throws IllegalStateException when the source gives no valid token (its message does not quote it),
     *                               or the token may not be sent to this endpoint ({@link #tokenInClear})
     */
    HttpHeaders headers(boolean status) {
        Supplier<String> tokens = settings.bearerToken();
        if (tokens == null || status) {
            return anonymous;
        }
        if (tokenRefused) { // a member joined at a plain address since the client was built
            throw tokenInClear(uri);
        }
        String token = tokens.get();
        Authorized last = authorized;
        if (last != null && last.token.equals(token)) {
            return last.headers;
        }
        if (!BearerTokens.isValid(token)) {
            throw new IllegalStateException("the bearer token source gave " + (token == null ? "null" : "a string that is"
                    + " not a token (printable ASCII without spaces)") + "; the request was not sent");
        }
        HttpHeaders headers = new DefaultHttpHeaders().set(anonymous).set(HttpHeaderNames.AUTHORIZATION, "Bearer " + token);
        authorized = new Authorized(token, headers);
        return headers;
    }

    private record Authorized(String token, HttpHeaders headers) {
        @Override
        public String toString() { // never the token
            return "Authorized[<token>]";
        }
    }

    /** The largest range entry: a value of up to maxResponseBytes, a key of up to 1024 bytes and its '\n'. */
    static int maxRangeEntryBytes(ClientSettings settings) {
        return settings.maxResponseBytes() + 1025;
    }

    /**
     * Queues {@code x} on a pooled connection; returns its result, which the caller may fail to
     * abandon the exchange. A {@linkplain Exchange#stream streamed} exchange holds its connection
     * until its answer was read (no other request is queued there meanwhile); for one, what is
     * returned completes once the connection is back in the pool.
     */
    CompletableFuture<Response> send(Exchange x) {
        Connection c;
        try {
            x.headers(headers(x.isStatus()));
            c = acquire(x.stream != null);
        } catch (RuntimeException e) {
            x.result.completeExceptionally(e);
            return x.result;
        }
        CompletableFuture<Response> released = x.result.whenComplete((r, e) -> {
            if (e != null && x.written()) {
                drop(c); // its exchange closes it: no request may be queued on it meanwhile
            }
            release(c, x.stream != null);
        });
        c.write(x);
        return x.stream != null ? released : x.result;
    }

    private synchronized void release(Connection c, boolean held) {
        c.pending.decrementAndGet();
        if (held) {
            c.held = false;
        }
    }

    private synchronized void drop(Connection c) {
        connections.remove(c);
    }

    /**
     * The least busy connection not held by a range, a new one while every one is busy and the pool
     * has room; with {@code hold}, held by the caller (a range) until its exchange completes.
     *
     * @throws OverloadedException (local) when every connection is held by a range, or has its
     *                             maximum of pending requests
     */
    private synchronized Connection acquire(boolean hold) {
        if (closed) {
            throw new IllegalStateException("the client is closed");
        }
        Connection best = null;
        for (Connection c : connections) {
            if (!c.held && (best == null || c.pending.get() < best.pending.get())) {
                best = c;
            }
        }
        boolean room = connections.size() < settings.connectionsPerEndpoint();
        if (room && (best == null || best.pending.get() > 0)) {
            best = open();
        } else if (best == null) {
            throw OverloadedException.local("every connection to " + peer + " (connectionsPerEndpoint: "
                    + settings.connectionsPerEndpoint() + ") is held by a range: read ranges to their end or close them");
        } else if (best.pending.get() >= settings.maxPendingPerConnection()) {
            throw OverloadedException.local("every connection to " + peer + " has "
                    + settings.maxPendingPerConnection() + " pending requests");
        }
        best.pending.incrementAndGet();
        best.held = hold;
        return best;
    }

    private Connection open() {
        Connection c = new Connection(bootstrap.connect());
        connections.add(c);
        c.connected.channel().closeFuture().addListener(f -> {
            synchronized (this) {
                connections.remove(c);
            }
        });
        return c;
    }

    /** Decoder settings that keep each chunk of up to {@code maxChunkBytes} whole (ranges frame entries by chunk). */
    static HttpClientCodec wholeChunkCodec(int maxChunkBytes) {
        return new HttpClientCodec(new HttpDecoderConfig().setMaxChunkSize(maxChunkBytes).setAllowPartialChunks(false),
                false, false);
    }

    static ConnectException connectFailure(String peer, Throwable cause) {
        if (cause instanceof ConnectException ce) {
            return ce;
        }
        ConnectException ce = new ConnectException("cannot connect to " + peer + ": " + cause);
        ce.initCause(cause);
        return ce;
    }

    String peer() {
        return peer;
    }

    String host() {
        return uri.getHost();
    }

    int port() {
        return port(uri);
    }

    void markUp() {
        if (!healthy && !closed) {
            healthy = true;
            KvorumClient.LOG.log(Level.INFO, "endpoint {0} is up", uri);
        }
    }

    void markDown(Throwable cause) {
        synchronized (this) {
            if (!healthy || closed) {
                return;
            }
            healthy = false;
        }
        KvorumClient.LOG.log(Level.WARNING, "endpoint {0} is down ({1}); probing it every {2} ms",
                uri, cause.toString(), settings.probeInterval().toMillis());
        scheduleProbe();
    }

    private void scheduleProbe() {
        try {
            group.schedule(this::probe, settings.probeInterval().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the client is closing
        }
    }

    private void probe() {
        if (healthy || closed) {
            return;
        }
        status().whenComplete((r, e) -> {
            if (e == null && r.status() == 200) {
                markUp();
            } else {
                scheduleProbe();
            }
        });
    }

    /**
     * A call sent here got no answer before its deadline: marks this endpoint down unless its
     * status answers (whatever it says) within the probe's timeout, and leaves it out of the
     * healthy ones while it waits. One probe at a time.
     */
    void suspect() {
        if (!healthy || closed || !suspectProbing.compareAndSet(false, true)) {
            return;
        }
        status().whenComplete((r, e) -> {
            suspectProbing.set(false);
            if (e != null && !(Call.unwrap(e) instanceof OverloadedException)) { // refused locally: no answer was awaited
                markDown(new KvorumTimeoutException("a call and then a status probe got no answer in time"));
            }
        });
    }

    /** {@code GET /v0/status}, failed with {@link KvorumTimeoutException} after the probe's timeout. */
    private CompletableFuture<Response> status() {
        Exchange x = new Exchange(HttpMethod.GET, "/v0/status", null);
        Duration timeout = probeTimeout();
        io.netty.util.concurrent.ScheduledFuture<?> timer = group.schedule(
                () -> x.abort(new KvorumTimeoutException("status probe of " + peer + " timed out after "
                        + timeout.toMillis() + " ms")), timeout.toNanos(), TimeUnit.NANOSECONDS);
        return send(x).whenComplete((r, e) -> timer.cancel(false));
    }

    /** How long a status probe waits: the connect timeout, or the request timeout when shorter. */
    private Duration probeTimeout() {
        Duration connect = settings.connectTimeout();
        return connect.compareTo(settings.requestTimeout()) < 0 ? connect : settings.requestTimeout();
    }

    void close() {
        List<Connection> open;
        synchronized (this) {
            closed = true;
            open = List.copyOf(connections);
        }
        unreport.run();
        open.forEach(c -> c.connected.channel().close());
    }

    /** A pooled connection, usable as soon as it is created: writes wait for the connect. */
    private final class Connection {
        final ChannelFuture connected;
        final AtomicInteger pending = new AtomicInteger();
        /** Held by a range until its answer was read: no other request is queued here meanwhile. Guarded by the endpoint. */
        boolean held;

        Connection(ChannelFuture connected) {
            this.connected = connected;
        }

        boolean inUse() {
            return pending.get() > 0;
        }

        void write(Exchange x) {
            if (connected.isDone()) {
                writeNow(x);
            } else {
                connected.addListener(f -> writeNow(x));
            }
        }

        private void writeNow(Exchange x) {
            if (!connected.isSuccess()) {
                x.result.completeExceptionally(connectFailure(peer, connected.cause()));
                return;
            }
            Channel ch = connected.channel();
            ch.writeAndFlush(x).addListener(f -> {
                if (!f.isSuccess()) {
                    x.result.completeExceptionally(sendFailure(peer, f.cause()));
                }
            });
        }
    }
}
