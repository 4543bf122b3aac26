package io.kvorum.node.http;

import io.kvorum.node.antientropy.RepairReport;
import io.kvorum.node.backup.BackupCoordinator;
import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.LiveTls;
import io.kvorum.node.security.TlsFiles;
import io.kvorum.node.time.Clock;
import io.kvorum.node.util.EventLoops;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.ssl.OpenSslCachingX509KeyManagerFactory;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.KeyManagerFactoryWrapper;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP front end: a Netty server (epoll where available) that adapts HTTP to the
 * {@link Coordinator}. Lifecycle: {@link #start} binds or throws; {@link #stop} stops accepting,
 * lets requests in progress finish within a grace period, then closes every connection.
 */
public final class HttpGateway {

    private static final Logger log = LoggerFactory.getLogger(HttpGateway.class);

    private final RequestRouter router;
    private final RequestMetering metering;
    private final InFlightRequests inFlight = new InFlightRequests();
    /** Requests whose headers came and whose body is still being read: uploads a graceful stop waits for. */
    private final InFlightRequests arriving = new InFlightRequests();
    private final int maxValueBytes;
    private final ByteBudget bodyBudget;
    private final ByteBudget answerBudget;
    private final long rangePullBytes;
    private final ConnectionLimit connections;
    private final LiveTls tls;
    private final BearerTokens tokens;
    private final ChannelGroup channels = new DefaultChannelGroup("http", GlobalEventExecutor.INSTANCE);
    private final EventLoops loops;
    private Channel serverChannel;

    /**
     * @param loops   the node's event loops, which the gateway uses and does not stop
     * @param status  the body of {@code GET /v0/status}, serialized as JSON
     * @param maxConnections client connections served at once, at most ({@code --max-connections});
     *                lowered to what the process's open-file limit leaves after the store's share
     * @param cluster the membership: {@code GET /v0/cluster}, its changes, and the bounds of {@code from}
     * @param repair  runs {@code POST /v0/repair}; completes with the report whether or not every peer was
     *                reached: its JSON summary answers 200, or 504 naming the peers that were not
     * @param metrics counts the client requests answered, reports those in progress, and is what
     *                {@code GET /metrics} shows
     * @param tls     the files of the HTTPS certificate, or null to serve plain HTTP
     * @param tokens  the bearer tokens every request but {@code GET /v0/status} must carry, or null for none
     * @param backups runs {@code POST /v0/backup} and answers {@code GET /v0/backup[/<id>]}
     */
    public HttpGateway(Coordinator coordinator, ClusterAdmin cluster, Clock clock,
                       int maxValueBytes, int maxConnections, int rangeBatchBytes, EventLoops loops, Supplier<NodeStatus> status,
                       Supplier<CompletableFuture<RepairReport>> repair, NodeMetrics metrics,
                       LiveTls tls, BearerTokens tokens, BackupCoordinator backups) {
        this.router = new RequestRouter(coordinator, cluster, clock, status, repair,
                metrics::scrapeAsync, backups);
        this.metering = RequestMetering.of(metrics);
        metrics.bindRequestsInFlight(inFlight::count);
        this.maxValueBytes = maxValueBytes;
        this.bodyBudget = ByteBudget.forThisProcess(maxValueBytes);
        this.answerBudget = ByteBudget.forThisProcess(maxValueBytes);
        this.rangePullBytes = (long) rangeBatchBytes + maxValueBytes; // a batch ends past its size, by one entry at most
        metrics.bindHttpBodyBytes("request", bodyBudget::held, bodyBudget.limit());
        metrics.bindHttpBodyBytes("answer", answerBudget::held, answerBudget.limit());
        long openFiles = ConnectionLimit.openFileLimit();
        this.connections = new ConnectionLimit(ConnectionLimit.effective(maxConnections, openFiles),
                ConnectionLimit.REFUSALS_AT_ONCE);
        if (connections.max() < maxConnections) {
            log.warn("serving at most {} client connections, not --max-connections {}: the process may open {} files, "
                            + "and {} of them are kept for storage and peers; raise the open-file limit (ulimit -n) "
                            + "to serve more", connections.max(), maxConnections, openFiles,
                    ConnectionLimit.RESERVED_DESCRIPTORS);
        }
        metrics.bindHttpConnections(connections::open, connections.max(), connections::refused);
        this.loops = loops;
        this.tls = tls;
        this.tokens = tokens;
    }

    /** Binds and starts serving; returns the bound address (useful with port 0). */
    public InetSocketAddress start(String bindAddress, int port) throws InterruptedException, SSLException {
        // On the live key manager: a certificate renewed in its files serves the next handshake.
        // OpenSSL's key material is cached by alias, which changes with each load, so a handshake
        // does not convert the key again (without the cache: 15% fewer new connections a second).
        SslContext https = tls == null ? null : SslContextBuilder.forServer(
                new OpenSslCachingX509KeyManagerFactory(new KeyManagerFactoryWrapper(tls.keyManager())))
                .protocols(TlsFiles.PROTOCOLS).build();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loops.acceptor(), loops.io())
                .channel(loops.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(64 * 1024, 256 * 1024))
                .childHandler(new GatewayChannelInitializer(
                        router::route,
                        head -> BearerAuthentication.admit(tokens, head).refusal() == null ? router.refusalBeforeBody(head) : null,
                        inFlight, arriving, metering, maxValueBytes, bodyBudget,
                        answerBudget, rangePullBytes, tokens, channels, connections, https));
        try {
            serverChannel = bootstrap.bind(bindAddress, port).sync().channel();
        } catch (Exception e) {
            stop(Duration.ZERO);
            throw e;
        }
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** Requests in progress right now, over all connections. */
    public int inFlight() {
        return inFlight.count();
    }

    /**
     * Stops accepting connections, waits up to {@code grace} in all for the bodies being uploaded
     * to arrive and for requests in progress to be answered, then closes every connection (the
     * event loops are the node's: {@link EventLoops}).
     */
    public void stop(Duration grace) throws InterruptedException {
        long deadline = System.nanoTime() + grace.toNanos();
        if (serverChannel != null) {
            serverChannel.close().await(grace.toMillis() + 1000);
        }
        // A body that arrives whole becomes a request in progress before it stops counting as arriving.
        if (!arriving.awaitNone(grace)) {
            log.info("closing {} connection(s) whose request body was still arriving after {} ms", arriving.count(),
                    grace.toMillis());
        }
        inFlight.awaitNone(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        channels.close().await(1, TimeUnit.SECONDS);
    }
}
