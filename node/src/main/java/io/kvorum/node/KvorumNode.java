package io.kvorum.node;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.antientropy.AntiEntropyService;
import io.kvorum.node.antientropy.RepairStorage;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipStore;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.ClusterRangeSource;
import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.coordinator.LocalReplica;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.http.HttpGateway;
import io.kvorum.node.http.NodeStatus;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.Security;
import io.kvorum.node.storage.ExpiryPurger;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.LocalEntryStream;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.transport.grpc.GrpcTransport;
import io.kvorum.node.util.NodeThreads;
import io.kvorum.node.util.WheelRequestTimer;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running Kvorum node: storage, coordinator and HTTP gateway (and, with peers, the transport,
 * liveness and hinted handoff of {@link PeerWiring}), wired from a {@link NodeConfig}. This class
 * only wires: every part is added to one {@link Lifecycle} as it is created, and stops in the
 * reverse order.
 *
 * <p>Lifecycle: {@link #start} opens the data directory and binds, or fails with a
 * {@link StartupException} having released everything; {@link #close()} shuts down gracefully
 * and {@link #kill()} as a crash would; both are idempotent. A graceful stop goes: anti-entropy
 * rounds, heartbeats, the HTTP gateway (which answers the requests in progress, within
 * {@link Tuning#shutdownGrace}), hint delivery, the transport (failing the replica calls still
 * waiting, so that their writes are hinted), the hint store (flushing queued hints), the request
 * timer, the executors whose tasks read storage (awaited), and storage last. A kill stops the
 * transport before the gateway, so that peers see the node vanish before its clients do.
 */
public final class KvorumNode implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KvorumNode.class);

    private final NodeConfig config;
    private final Lifecycle parts;
    private final InetSocketAddress httpAddress;

    private KvorumNode(NodeConfig config, Lifecycle parts, InetSocketAddress httpAddress) {
        this.config = config;
        this.parts = parts;
        this.httpAddress = httpAddress;
    }

    /** Starts a node on the HTTP port of its {@code --cluster} entry. */
    public static KvorumNode start(NodeConfig config) throws StartupException {
        return start(config, config.self().httpPort(), Clock.SYSTEM);
    }

    /**
     * Starts a node whose peers are reached over gRPC.
     *
     * @param httpPort the port to serve HTTP on; 0 picks a free one (tests)
     */
    public static KvorumNode start(NodeConfig config, int httpPort, Clock clock) throws StartupException {
        return start(config, httpPort, clock, GrpcTransport.FACTORY);
    }

    /**
     * Starts a node whose peers are reached through {@code transports} (tests plug in their own).
     *
     * @param httpPort the port to serve HTTP on; 0 picks a free one (tests)
     */
    public static KvorumNode start(NodeConfig config, int httpPort, Clock clock, PeerTransport.Factory transports)
            throws StartupException {
        Membership membership = storedMembership(config);
        NodeConfig member;
        try {
            member = config.withMembership(membership);
        } catch (InvalidTopologyException e) {
            throw new StartupException(e.getMessage());
        }
        Lifecycle parts = new Lifecycle();
        try {
            return new KvorumNode(member, parts, wire(member, membership, httpPort, clock, transports, parts));
        } catch (StartupException | RuntimeException e) {
            parts.stop(false);
            throw e;
        }
    }

    /** Creates and starts every part, adding each to {@code parts}; returns the HTTP address. */
    private static InetSocketAddress wire(NodeConfig config, Membership stored, int httpPort, Clock clock,
                                          PeerTransport.Factory transports, Lifecycle parts) throws StartupException {
        Tuning tuning = config.tuning();
        NodeMetrics metrics = new NodeMetrics(config.self().id(), config.topology().members().stream().map(ClusterMember::id).toList(),
                AntiEntropyService.roundOutcomes());
        parts.add("metrics", graceful -> metrics.close());
        StorageService storage = openStorage(config, metrics);
        StorageExecutors executors = new StorageExecutors(tuning.executorStopWait());
        parts.add("storage", graceful -> executors.closeWhenStopped(storage));
        parts.add("storage-reading executors", graceful -> executors.stop());
        WheelRequestTimer deadlines = new WheelRequestTimer();
        parts.add("request timer", graceful -> deadlines.close());

        HybridLogicalClock hlc = new HybridLogicalClock(clock);
        String selfId = config.self().id();
        LocalReplica local = new LocalReplica(selfId, storage, hlc);
        RangeSource localRange = (start, end) ->
                new LocalEntryStream(storage, start, end, tuning.rangeBatchEntries(), tuning.rangeBatchBytes());
        AntiEntropyService antiEntropy = new AntiEntropyService(selfId, config.topology(), config.replicationFactor(),
                new RepairStorage(storage, local, new RepairStorage.Pacing(config.antiEntropyRate(),
                        config.antiEntropyBandwidth(), RepairStorage.Pacing.INDEX_ENTRIES_PER_SECOND)), executors.antiEntropy,
                config.antiEntropyInterval(), tuning.antiEntropyIdleTimeout(), metrics);
        PeerWiring peers = config.topology().size() > 1
                ? PeerWiring.start(config, clock, transports, parts, executors.rangeTimer, deadlines, local,
                        localRange, antiEntropy, metrics)
                : PeerWiring.NONE;
        Map<String, Replica> replicas = new HashMap<>(peers.replicas());
        replicas.put(selfId, local);
        Map<String, RangeSource> ranges = new HashMap<>(peers.ranges());
        ranges.put(selfId, localRange);
        Coordinator coordinator = new Coordinator(selfId, new Placement(config.topology()), replicas, hlc, clock,
                config.requestTimeout(), deadlines, new ClusterRangeSource(ranges, config.replicationFactor(),
                        tuning.rangeBatchEntries(), tuning.rangeBatchBytes(), hlc::observe),
                peers.hints(), metrics);

        ClusterView membership = stored.view();
        BearerTokens tokens = bearerTokens(config.security(), executors.maintenance);
        HttpGateway gateway = new HttpGateway(coordinator, config.topology().size(), config.replicationFactor(),
                clock, config.maxValueBytes(), config.httpThreads(),
                () -> NodeStatus.serving(selfId, config.topology().size(), config.replicationFactor(),
                        peers.peerStatus().get(), peers.hintStatus().get(),
                        config.topology().size() > 1 ? antiEntropy.state() : null, storage.store().approximateBytes()),
                () -> membership, antiEntropy::repair, metrics, config.security().tls(), tokens);
        // Stopped early: the gateway gets its grace for requests in progress only on a graceful stop.
        parts.add("HTTP gateway", graceful -> gateway.stop(graceful ? tuning.shutdownGrace() : Duration.ZERO));
        parts.add("transport, on a kill", peers.killTransport()); // peers see the crash before clients
        parts.add("heartbeats", peers.stopLiveness());
        parts.add("anti-entropy", graceful -> antiEntropy.close());

        peers.startLiveness().run();
        antiEntropy.start(peers.antiEntropyPeers());
        ExpiryPurger purger = new ExpiryPurger(storage, clock, config.tombstoneGrace().toMillis());
        long purgeMs = config.purgeInterval().toMillis();
        executors.maintenance.scheduleWithFixedDelay(() -> {
            try {
                purger.runOnce();
            } catch (RuntimeException e) {
                log.warn("purging expired records failed; will retry", e);
            }
        }, purgeMs, purgeMs, TimeUnit.MILLISECONDS);
        peers.announce().run();
        InetSocketAddress address;
        try {
            address = gateway.start(config.bindAddress(), httpPort);
        } catch (Exception e) {
            throw new StartupException("cannot listen for HTTP on " + config.bindAddress() + ":" + httpPort + ": "
                    + bindFailure(e));
        }
        log.info("node {} serving {} on {} with data in {} (cluster of {}, replication factor {}{}{})",
                selfId, config.security().tlsEnabled() ? "HTTPS" : "HTTP", address,
                config.dataDir().toAbsolutePath().normalize(), config.topology().size(), config.replicationFactor(),
                config.fsync() ? ", fsync" : "", tokens != null ? ", " + tokens.size() + " bearer token(s)" : "");
        peers.startHandoff().run();
        return address;
    }

    /**
     * The tokens of {@code --auth-token-file}, re-read every {@value BearerTokens#REFRESH_SECONDS} s
     * on {@code scheduler}; null when the node is open.
     */
    private static BearerTokens bearerTokens(Security security, ScheduledExecutorService scheduler)
            throws StartupException {
        if (!security.tokensRequired()) {
            return null;
        }
        BearerTokens tokens;
        try {
            tokens = BearerTokens.load(security.tokenFile());
        } catch (BearerTokens.InvalidTokenFileException e) {
            throw new StartupException("--auth-token-file '" + security.tokenFile() + "' " + e.getMessage());
        }
        scheduler.scheduleWithFixedDelay(tokens::refresh, BearerTokens.REFRESH_SECONDS, BearerTokens.REFRESH_SECONDS,
                TimeUnit.SECONDS);
        return tokens;
    }

    /**
     * The executors whose tasks read storage: range-batch timeouts, anti-entropy rounds and the
     * expiry purge. They stop together, and storage closes only once all have ended.
     */
    private static final class StorageExecutors {
        final ScheduledThreadPoolExecutor rangeTimer = NodeThreads.scheduled("range-timer", 1);
        final ScheduledThreadPoolExecutor maintenance = NodeThreads.scheduled("maintenance", 1);
        final ScheduledThreadPoolExecutor antiEntropy = NodeThreads.scheduled("anti-entropy", 1);
        private final Duration wait;
        private volatile boolean ended;

        StorageExecutors(Duration wait) {
            this.wait = wait;
        }

        /** Stops all three, waiting up to {@code wait} for anti-entropy and then again for all. */
        void stop() throws InterruptedException {
            maintenance.shutdownNow(); // interrupts a purge, which stops between records
            rangeTimer.shutdownNow();
            antiEntropy.shutdown(); // lets cancelled rounds close their storage scans first
            if (!antiEntropy.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                antiEntropy.shutdownNow();
            }
            long deadline = System.nanoTime() + wait.toNanos();
            for (ScheduledThreadPoolExecutor e : new ScheduledThreadPoolExecutor[] {antiEntropy, maintenance, rangeTimer}) {
                if (!e.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    return;
                }
            }
            ended = true;
        }

        /**
         * Closes {@code storage} if every executor has ended; otherwise leaves it open (logged):
         * closing LevelDB under a running reader frees memory it is using, while an open database
         * costs nothing the process exit does not reclaim.
         */
        void closeWhenStopped(StorageService storage) throws Exception {
            if (!ended) {
                log.error("a storage reader (anti-entropy, purge or range timer) did not stop within {} ms; "
                        + "leaving storage open rather than closing it under it", wait.toMillis());
                return;
            }
            storage.close();
        }
    }

    /**
     * The membership stored in the data dir, seeded from the options on the first start; it wins
     * over {@code --cluster} from then on (SPEC §8).
     */
    private static Membership storedMembership(NodeConfig config) throws StartupException {
        MembershipStore store = new MembershipStore(config.dataDir());
        try {
            Files.createDirectories(config.dataDir());
            return store.loadOrSeed(config.seedMembership());
        } catch (InvalidTopologyException e) {
            throw new StartupException(e.getMessage());
        } catch (AccessDeniedException e) {
            throw new StartupException("data dir " + config.dataDir() + " is not writable (access denied: " + e.getFile() + ")");
        } catch (IOException e) {
            throw new StartupException("cannot use the membership in " + store.file() + ": "
                    + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()));
        }
    }

    /** Why binding failed, for the one-line startup message; never "null". */
    static String bindFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException) {
                return "address already in use or not available";
            }
            if (t instanceof UnresolvedAddressException) {
                return "cannot resolve the address";
            }
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static StorageService openStorage(NodeConfig config, NodeMetrics metrics) throws StartupException {
        String where = config.dataDir().toString();
        try {
            Files.createDirectories(config.dataDir());
            if (!Files.isWritable(config.dataDir())) {
                throw new StartupException("data dir " + where + " is not writable");
            }
            // The bucket index serves anti-entropy only, which a single node does not run.
            LevelDbStore store = LevelDbStore.open(config.dataDir().resolve("records"), config.fsync(),
                    config.tuning().storageCacheBytes(), config.topology().size() > 1);
            return new StorageService(store, config.storageReaders(), config.storageQueue(), metrics);
        } catch (AccessDeniedException e) {
            throw new StartupException("data dir " + where + " is not writable (access denied: " + e.getFile() + ")");
        } catch (FileSystemException e) {
            throw new StartupException("cannot use data dir " + where + ": " + e.getFile() + ": "
                    + (e.getReason() != null ? e.getReason() : e.getClass().getSimpleName()));
        } catch (IOException e) {
            String msg = String.valueOf(e.getMessage());
            if (msg.contains("lock")) {
                throw new StartupException("data dir " + where + " is in use by another process");
            }
            throw new StartupException("cannot open storage in " + where + ": " + msg);
        }
    }

    public InetSocketAddress httpAddress() {
        return httpAddress;
    }

    public NodeConfig config() {
        return config;
    }

    /** Graceful shutdown; see the class comment. */
    @Override
    public void close() {
        shutDown(true);
    }

    /**
     * Stops at once, like a crash as far as peers and clients can tell: no grace for requests in
     * progress, connections dropped. Acknowledged writes are in LevelDB's log already. For tests.
     */
    public void kill() {
        shutDown(false);
    }

    private synchronized void shutDown(boolean graceful) {
        if (parts.isStopped()) {
            return;
        }
        log.info("node {} {}", config.self().id(), graceful ? "shutting down" : "killed");
        parts.stop(graceful);
        log.info("node {} stopped", config.self().id());
    }

    /** The node could not start; the message is one line for the operator. */
    public static final class StartupException extends Exception {
        public StartupException(String message) {
            super(message, null, false, false);
        }
    }
}
