package io.kvorum.node;

import io.kvorum.node.cluster.Placement;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.coordinator.ClusterRangeSource;
import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.coordinator.HintSink;
import io.kvorum.node.coordinator.LocalReplica;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.http.HttpGateway;
import io.kvorum.node.liveness.GuardedReplica;
import io.kvorum.node.liveness.Heartbeats;
import io.kvorum.node.liveness.PeerLiveness;
import io.kvorum.node.repair.AntiEntropyService;
import io.kvorum.node.repair.RepairStorage;
import io.kvorum.node.repair.HintStore;
import io.kvorum.node.repair.HintedHandoff;
import io.kvorum.node.storage.ExpiryPurger;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.LocalEntryStream;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.transport.grpc.GrpcTransport;
import io.kvorum.node.util.NamedThreadFactory;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running Kvorum node: storage, coordinator and HTTP gateway, wired from a {@link NodeConfig}.
 *
 * <p>Lifecycle: {@link #start} opens the data directory and binds, or fails with a
 * {@link StartupException} having released everything; {@link #close()} shuts down gracefully
 * (stop accepting, answer what is in progress, flush, close storage) and is idempotent.
 */
public final class KvorumNode implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KvorumNode.class);
    static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(5);
    private static final int RANGE_BATCH_ENTRIES = 256;
    private static final int RANGE_BATCH_BYTES = 256 * 1024;
    /** How long an anti-entropy round waits for its peer (e.g. to build its tree) before it fails. */
    private static final Duration ANTI_ENTROPY_IDLE_TIMEOUT = Duration.ofSeconds(60);
    /** How often peers with hints are tried: well within SPEC's 5 s from a peer's return to delivery. */
    private static final Duration HINT_CHECK_INTERVAL = Duration.ofMillis(250);
    private static final int HINT_WINDOW = 64;
    private static final long HINT_QUEUE_BYTES = 64L << 20;
    /** How often each peer is pinged; with {@link #MISSES_TO_DOWN}, a frozen peer is down within about 3 s. */
    private static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(1);
    private static final int MISSES_TO_DOWN = 2;
    /** How long a starting node waits for its peers to answer its announcement before it serves anyway. */
    private static final Duration ANNOUNCE_WAIT = Duration.ofSeconds(3);

    private final NodeConfig config;
    private final StorageService storage;
    private final WheelRequestTimer deadlines;
    private final ScheduledThreadPoolExecutor rangeTimer;
    private final ScheduledThreadPoolExecutor maintenance;
    private final ScheduledThreadPoolExecutor antiEntropyExecutor;
    private final ScheduledThreadPoolExecutor livenessExecutor;
    private final AntiEntropyService antiEntropy;
    private final Heartbeats heartbeats; // null in a single-node cluster
    private final PeerTransport transport; // null in a single-node cluster
    private final Hints hints; // null without hinted handoff
    private final HttpGateway gateway;
    private final InetSocketAddress httpAddress;
    private boolean closed;

    private KvorumNode(NodeConfig config, StorageService storage, WheelRequestTimer deadlines,
                       ScheduledThreadPoolExecutor rangeTimer,
                       ScheduledThreadPoolExecutor maintenance, ScheduledThreadPoolExecutor antiEntropyExecutor,
                       ScheduledThreadPoolExecutor livenessExecutor, AntiEntropyService antiEntropy,
                       Heartbeats heartbeats, PeerTransport transport, Hints hints, HttpGateway gateway,
                       InetSocketAddress httpAddress) {
        this.config = config;
        this.storage = storage;
        this.deadlines = deadlines;
        this.rangeTimer = rangeTimer;
        this.maintenance = maintenance;
        this.antiEntropyExecutor = antiEntropyExecutor;
        this.livenessExecutor = livenessExecutor;
        this.antiEntropy = antiEntropy;
        this.heartbeats = heartbeats;
        this.transport = transport;
        this.hints = hints;
        this.gateway = gateway;
        this.httpAddress = httpAddress;
    }

    /** Hinted handoff's two parts: the store (also the coordinator's sink) and the delivery. */
    private record Hints(HintStore store, HintedHandoff handoff) {
        /** Stops delivery, then writes what is queued and closes the store. */
        void close() {
            try {
                handoff.close();
                store.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** The status fields: hints stored per peer, delivered and dropped since start. */
        String statusJson() {
            StringBuilder pending = new StringBuilder();
            store.pendingByPeer().forEach((peer, n) ->
                    pending.append(pending.isEmpty() ? "" : ",").append('"').append(peer).append("\":").append(n));
            return ",\"hints\":{\"pending\":{" + pending + "},\"delivered\":" + handoff.delivered()
                    + ",\"dropped\":" + store.dropped() + "}";
        }
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
        StorageService storage = openStorage(config);
        WheelRequestTimer deadlines = new WheelRequestTimer();
        ScheduledThreadPoolExecutor rangeTimer = new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("range-timer"));
        rangeTimer.setRemoveOnCancelPolicy(true);
        ScheduledThreadPoolExecutor maintenance = new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("maintenance"));
        ScheduledThreadPoolExecutor antiEntropyExecutor =
                new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("anti-entropy"));
        antiEntropyExecutor.setRemoveOnCancelPolicy(true);
        antiEntropyExecutor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        ScheduledThreadPoolExecutor livenessExecutor =
                new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("liveness"));
        livenessExecutor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        PeerTransport transport = null;
        Heartbeats heartbeats = null;
        PeerLiveness liveness = null;
        AntiEntropyService antiEntropy = null;
        Hints hints = null;
        try {
            HybridLogicalClock hlc = new HybridLogicalClock(clock);
            String selfId = config.self().id();
            LocalReplica local = new LocalReplica(selfId, storage, hlc);
            Map<String, Replica> replicas = new HashMap<>();
            replicas.put(selfId, local);
            RangeSource localRange =
                    (start, end) -> new LocalEntryStream(storage, start, end, RANGE_BATCH_ENTRIES, RANGE_BATCH_BYTES);
            Map<String, RangeSource> ranges = new HashMap<>();
            ranges.put(selfId, localRange);
            antiEntropy = new AntiEntropyService(selfId, config.topology(), config.replicationFactor(),
                    new RepairStorage(storage, local, antiEntropyExecutor), antiEntropyExecutor,
                    config.antiEntropyInterval(), ANTI_ENTROPY_IDLE_TIMEOUT);
            if (config.topology().size() > 1) {
                liveness = new PeerLiveness(config.topology().members().stream().map(m -> m.id())
                        .filter(id -> !id.equals(selfId)).toList(), clock, MISSES_TO_DOWN);
                heartbeats = new Heartbeats(liveness, livenessExecutor, HEARTBEAT_INTERVAL, clock);
                transport = transports.create(config, rangeTimer, deadlines);
                try {
                    transport.start(new PeerTransport.LocalServices(local, localRange, antiEntropy, heartbeats));
                } catch (IOException e) {
                    throw new StartupException("cannot listen for gRPC on " + config.bindAddress() + ":"
                            + config.self().grpcPort() + ": " + bindFailure(e));
                }
                PeerTransport peerTransport = transport;
                liveness.addListener(new PeerLiveness.Listener() {
                    @Override
                    public void peerUp(String peer) {
                    }

                    @Override
                    public void peerDown(String peer) {
                        peerTransport.abandonStream(peer);
                    }
                });
                Map<String, Replica> peers = new HashMap<>();
                for (Replica peer : transport.replicas().values()) {
                    peers.put(peer.nodeId(), new GuardedReplica(peer, liveness, heartbeats));
                }
                replicas.putAll(peers);
                ranges.putAll(transport.ranges());
                if (config.hintedHandoff()) {
                    HintStore store = openHints(config, clock);
                    HintedHandoff handoff = new HintedHandoff(store, peers, HINT_CHECK_INTERVAL, HINT_WINDOW);
                    hints = new Hints(store, handoff);
                    liveness.addListener(peer -> handoff.deliverPending()); // at once, not at the next check
                }
                heartbeats.start(transport.probes());
            }
            antiEntropy.start(transport != null ? transport.antiEntropyPeers() : List.of());
            Coordinator coordinator = new Coordinator(selfId, new Placement(config.topology()), replicas, hlc, clock,
                    config.requestTimeout(), deadlines, new ClusterRangeSource(ranges, config.replicationFactor(),
                            RANGE_BATCH_ENTRIES, RANGE_BATCH_BYTES, hlc::observe),
                    hints != null ? hints.store() : HintSink.NONE);

            ExpiryPurger purger = new ExpiryPurger(storage, clock, config.tombstoneGrace().toMillis());
            long purgeMs = config.purgeInterval().toMillis();
            maintenance.scheduleWithFixedDelay(() -> {
                try {
                    purger.runOnce();
                } catch (RuntimeException e) {
                    log.warn("purging expired records failed; will retry", e);
                }
            }, purgeMs, purgeMs, TimeUnit.MILLISECONDS);

            String status = "{\"node\":\"" + selfId + "\",\"status\":\"serving\",\"clusterSize\":"
                    + config.topology().size() + ",\"replicationFactor\":" + config.replicationFactor();
            Hints hintsForStatus = hints;
            PeerLiveness peersForStatus = liveness;
            AntiEntropyService repairs = antiEntropy;
            HttpGateway gateway = new HttpGateway(coordinator, config.topology().size(), config.replicationFactor(),
                    clock, config.maxValueBytes(), config.httpThreads(),
                    () -> status + (peersForStatus != null ? peersJson(peersForStatus) : "")
                            + (hintsForStatus != null ? hintsForStatus.statusJson() : "") + "}",
                    () -> repairs.repair().thenApply(report -> report.requireComplete().toJson()));
            if (heartbeats != null) {
                announce(heartbeats);
            }
            InetSocketAddress address;
            try {
                address = gateway.start(config.bindAddress(), httpPort);
            } catch (Exception e) {
                throw new StartupException("cannot listen for HTTP on " + config.bindAddress() + ":" + httpPort + ": "
                        + bindFailure(e));
            }
            log.info("node {} serving HTTP on {} with data in {} (cluster of {}, replication factor {}{})",
                    selfId, address, config.dataDir().toAbsolutePath().normalize(), config.topology().size(),
                    config.replicationFactor(), config.fsync() ? ", fsync" : "");
            if (hints != null) {
                hints.handoff().start();
            }
            return new KvorumNode(config, storage, deadlines, rangeTimer, maintenance, antiEntropyExecutor,
                    livenessExecutor, antiEntropy, heartbeats, transport, hints, gateway, address);
        } catch (StartupException | RuntimeException e) {
            if (antiEntropy != null) {
                antiEntropy.close();
            }
            if (heartbeats != null) {
                heartbeats.close();
            }
            livenessExecutor.shutdownNow();
            if (transport != null) {
                transport.kill();
            }
            if (hints != null) {
                hints.close();
            }
            deadlines.close();
            rangeTimer.shutdownNow();
            maintenance.shutdownNow();
            antiEntropyExecutor.shutdownNow();
            try {
                storage.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Tells the peers this node has started and waits, within {@link #ANNOUNCE_WAIT}, until each
     * has reached it back or was found down: from then on every live peer serves this node's
     * requests and sends it theirs (SPEC §3 "Liveness").
     */
    private static void announce(Heartbeats heartbeats) {
        try {
            heartbeats.announce().get(ANNOUNCE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            log.info("not every peer answered this node's announcement within {} ms; serving anyway",
                    ANNOUNCE_WAIT.toMillis());
        } catch (java.util.concurrent.ExecutionException e) {
            log.warn("announcing this node to its peers failed; serving anyway", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The status field with what this node knows of each peer. */
    private static String peersJson(PeerLiveness liveness) {
        StringBuilder json = new StringBuilder(",\"peers\":{");
        liveness.snapshot().forEach((peer, s) -> json.append(json.charAt(json.length() - 1) == '{' ? "" : ",")
                .append('"').append(peer).append("\":{\"state\":\"").append(s.state().jsonName())
                .append("\",\"since\":").append(s.sinceMillis()).append(",\"rttMicros\":").append(s.rttMicros())
                .append('}'));
        return json.append('}').toString();
    }

    /** Why binding failed, for the one-line startup message; never "null". */
    private static String bindFailure(Throwable e) {
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

    private static StorageService openStorage(NodeConfig config) throws StartupException {
        String where = config.dataDir().toString();
        try {
            Files.createDirectories(config.dataDir());
            if (!Files.isWritable(config.dataDir())) {
                throw new StartupException("data dir " + where + " is not writable");
            }
            LevelDbStore store = LevelDbStore.open(config.dataDir().resolve("records"), config.fsync(), 64L << 20);
            return new StorageService(store, config.storageReaders(), config.storageQueue());
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

    private static HintStore openHints(NodeConfig config, Clock clock) throws StartupException {
        HintStore.Limits limits = new HintStore.Limits(config.hintMaxBytesPerPeer(), config.hintMaxAge(),
                config.storageQueue(), HINT_QUEUE_BYTES);
        try {
            return HintStore.open(config.dataDir().resolve("hints"), config.fsync(), limits, clock);
        } catch (IOException e) {
            throw new StartupException("cannot open hints in " + config.dataDir() + ": " + e.getMessage());
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
        if (closed) {
            return;
        }
        closed = true;
        log.info("node {} {}", config.self().id(), graceful ? "shutting down" : "killed");
        antiEntropy.close();
        if (heartbeats != null) {
            heartbeats.close();
        }
        livenessExecutor.shutdownNow();
        try {
            if (!graceful && transport != null) {
                transport.kill(); // peers see the node vanish before its clients do, as in a crash
            }
            gateway.stop(graceful ? SHUTDOWN_GRACE : Duration.ZERO);
            if (hints != null) {
                hints.handoff().close(); // before the peers it delivers to close
            }
            if (graceful && transport != null) {
                transport.close(); // fails the writes still waiting, which are hinted before it returns
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (hints != null) {
            hints.close(); // flushes queued hints; the handoff is closed already, which is idempotent
        }
        maintenance.shutdownNow(); // interrupts a purge, which stops between records
        deadlines.close();
        rangeTimer.shutdownNow();
        antiEntropyExecutor.shutdown(); // lets cancelled rounds close their storage scans first
        try {
            if (!antiEntropyExecutor.awaitTermination(2, TimeUnit.SECONDS)) {
                antiEntropyExecutor.shutdownNow();
            }
            if (!maintenance.awaitTermination(2, TimeUnit.SECONDS)) {
                log.error("the expiry purge did not stop within 2 s; leaving storage open rather than closing it under it");
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            storage.close();
        } catch (Exception e) {
            log.error("closing storage failed", e);
        }
        log.info("node {} stopped", config.self().id());
    }

    /** The node could not start; the message is one line for the operator. */
    public static final class StartupException extends Exception {
        public StartupException(String message) {
            super(message, null, false, false);
        }
    }
}
