package io.kvorum.node;

import io.kvorum.node.antientropy.AntiEntropyService;
import io.kvorum.node.antientropy.RepairLedger;
import io.kvorum.node.antientropy.RepairStorage;
import io.kvorum.node.backup.BackupCoordinator;
import io.kvorum.node.backup.LocalBackups;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChange;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.MembershipStore;
import io.kvorum.node.cluster.PlacementPlan;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.ClusterRangeSource;
import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.coordinator.LocalReplica;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.http.HttpGateway;
import io.kvorum.node.http.NodeStatus;
import io.kvorum.node.membership.Cleanup;
import io.kvorum.node.membership.MoveProgress;
import io.kvorum.node.membership.JoinStream;
import io.kvorum.node.membership.LeaveStream;
import io.kvorum.node.membership.MembershipAdmin;
import io.kvorum.node.membership.RebuildStream;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.rebuild.Rebuild;
import io.kvorum.node.rebuild.RebuildingReplica;
import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.LiveTls;
import io.kvorum.node.security.MemberCertificate;
import io.kvorum.node.security.Security;
import io.kvorum.node.storage.DamagedStoreException;
import io.kvorum.node.storage.DiskSpace;
import io.kvorum.node.storage.ExpiryPurger;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.LocalEntryStream;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.transport.grpc.GrpcTransport;
import io.kvorum.node.util.EventLoops;
import io.kvorum.node.util.Failures;
import io.kvorum.node.util.NodeThreads;
import io.kvorum.node.util.WheelRequestTimer;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;
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
    /** How often the free space of the data directory is read ({@link DiskSpace}). */
    private static final long DISK_CHECK_MILLIS = 250;

    private final NodeConfig config;
    private final Lifecycle parts;
    private final InetSocketAddress httpAddress;

    private KvorumNode(NodeConfig config, Lifecycle parts, InetSocketAddress httpAddress) {
        this.config = config;
        this.parts = parts;
        this.httpAddress = httpAddress;
    }

    /**
     * The {@code httpPort} that means: the HTTP port of this node's own entry in the membership it
     * starts with, the stored one if there is one (docs/operations.md#growing-and-shrinking-a-cluster), else {@code --cluster}'s.
     */
    public static final int OWN_ENTRY_PORT = -1;

    /**
     * Starts a node as {@code java -jar} does: on the HTTP port of its own entry in its membership,
     * once {@code --warm-up} has compiled its request path ({@link RequestPathWarmup}).
     */
    public static KvorumNode start(NodeConfig config) throws StartupException {
        return start(config, Clock.SYSTEM);
    }

    /** As {@link #start(NodeConfig)}, on {@code clock}. */
    public static KvorumNode start(NodeConfig config, Clock clock) throws StartupException {
        return start(config, OWN_ENTRY_PORT, clock, GrpcTransport.FACTORY, true);
    }

    /**
     * Starts a node whose peers are reached over gRPC.
     *
     * @param httpPort the port to serve HTTP on; 0 picks a free one (tests); {@link #OWN_ENTRY_PORT}
     */
    public static KvorumNode start(NodeConfig config, int httpPort, Clock clock) throws StartupException {
        return start(config, httpPort, clock, GrpcTransport.FACTORY);
    }

    /**
     * Starts a node whose peers are reached through {@code transports} (tests plug in their own).
     *
     * @param httpPort the port to serve HTTP on; 0 picks a free one (tests); {@link #OWN_ENTRY_PORT}
     */
    public static KvorumNode start(NodeConfig config, int httpPort, Clock clock, PeerTransport.Factory transports)
            throws StartupException {
        return start(config, httpPort, clock, transports, false);
    }

    private static KvorumNode start(NodeConfig config, int httpPort, Clock clock, PeerTransport.Factory transports,
                                    boolean warmUp) throws StartupException {
        MembershipStore store = new MembershipStore(config.dataDir());
        Membership stored = storedMembership(config, store);
        boolean joining = stored == null && config.join();
        boolean seeding = stored == null && !config.join();
        Membership membership = stored != null ? stored : config.seedMembership();
        NodeConfig member;
        try {
            member = config.withMembership(membership);
        } catch (InvalidTopologyException e) {
            throw new StartupException(e.getMessage());
        }
        int port = httpPort == OWN_ENTRY_PORT ? member.self().httpPort() : httpPort;
        Lifecycle parts = new Lifecycle();
        try {
            InetSocketAddress address = wire(member, membership, joining, port, clock, transports, warmUp, parts);
            removeLeftovers(store); // the store is open: this process holds the data dir
            if (seeding) {
                seed(store, membership);
            }
            return new KvorumNode(member, parts, address);
        } catch (StartupException | RuntimeException e) {
            boolean interrupted = Thread.interrupted(); // a stop requested meanwhile: let the parts close
            parts.stop(false);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            throw e;
        }
    }

    /** Creates and starts every part, adding each to {@code parts}; returns the HTTP address. */
    private static InetSocketAddress wire(NodeConfig config, Membership stored, boolean joining, int httpPort, Clock clock,
                                          PeerTransport.Factory transports, boolean warmUp, Lifecycle parts)
            throws StartupException {
        Tuning tuning = config.tuning();
        NodeMetrics metrics = new NodeMetrics(config.self().id(), config.topology().members().stream().map(ClusterMember::id).toList(),
                AntiEntropyService.roundOutcomes());
        parts.add("metrics", graceful -> metrics.close());
        boolean storeExisted = Files.isDirectory(config.dataDir().resolve("records"));
        StorageService storage = openStorage(config, metrics);
        // Its own thread: a purge pass on the maintenance thread can take minutes.
        ScheduledThreadPoolExecutor diskCheck = NodeThreads.scheduled("disk-check", 1);
        parts.add("disk check", graceful -> diskCheck.shutdownNow());
        diskCheck.scheduleWithFixedDelay(storage.disk()::check, DISK_CHECK_MILLIS, DISK_CHECK_MILLIS, TimeUnit.MILLISECONDS);
        StorageExecutors executors = new StorageExecutors(tuning.executorStopWait());
        parts.add("storage", graceful -> executors.closeWhenStopped(storage));
        parts.add("storage-reading executors", graceful -> executors.stop());
        if (warmUp) { // the data dir is this process's now, and closes with it; nothing listens yet
            warmUp(config, httpPort);
        }
        WheelRequestTimer deadlines = new WheelRequestTimer();
        parts.add("request timer", graceful -> deadlines.close());
        EventLoops loops = EventLoops.create(config.httpThreads());
        parts.add("event loops", graceful -> loops.close()); // after the gateway and the transport

        HybridLogicalClock hlc = HybridLogicalClock.guardedAgainstSteps(clock, config.maxClockOffset());
        metrics.bindRefusedPeerTimestamps(hlc::refusedFromPeers);
        startClockPastStored(hlc, clock, storage.store().timestampCeilingAtOpen(), config.maxClockOffset());
        String selfId = config.self().id();
        LocalReplica local = new LocalReplica(selfId, storage, hlc);
        RangeSource localRange = (start, end) ->
                new LocalEntryStream(storage, start, end, tuning.rangeBatchEntries(), tuning.rangeBatchBytes());
        ExecutorService membershipThread = NodeThreads.singleExecutor("membership");
        parts.add("membership", graceful -> membershipThread.shutdownNow());
        ClusterMembership cluster = new ClusterMembership(selfId, stored, new MembershipStore(config.dataDir()),
                membershipThread, !joining);
        RepairLedger ledger = RepairLedger.open(config.dataDir(), selfId, stored.current(), stored.replicationFactor(),
                hlc::now);
        storage.store().onStoredTombstones(ledger::tombstoneStored);
        // Stopped after anti-entropy and every peer: a crash (a kill) leaves the floors unknown on purpose.
        parts.add("repair ledger", graceful -> {
            if (graceful) {
                ledger.close();
            }
        });
        Rebuild rebuild = openRebuild(config, storage, storeExisted, !joining && stored.topology().size() > 1,
                () -> cluster.membership().topology().members().stream().map(ClusterMember::id)
                        .filter(id -> !id.equals(selfId)).collect(Collectors.toSet()));
        metrics.bindRebuilding(rebuild::refuseReads);
        AntiEntropyService antiEntropy = new AntiEntropyService(selfId, stored.current(), stored.replicationFactor(),
                new RepairStorage(storage, local, new RepairStorage.Pacing(config.antiEntropyRate(),
                        config.antiEntropyBandwidth(), RepairStorage.Pacing.INDEX_ENTRIES_PER_SECOND)), executors.antiEntropy,
                config.antiEntropyInterval(), tuning.antiEntropyIdleTimeout(), metrics, ledger);
        // Paced as anti-entropy is: a backup is background work (docs/operations.md#backup-and-restore).
        LocalBackups backups = new LocalBackups(selfId, config.backupDir(), storage, cluster::membership,
                NodeThreads.singleExecutor("backup"), executors.rangeTimer, tuning.changes().changeDeadline(),
                config.antiEntropyRate(), config.antiEntropyBandwidth(), metrics, clock);
        parts.add("backups", backups::close); // its snapshot is released before the store closes
        PeerWiring peers = PeerWiring.start(config, clock, transports, parts, executors.rangeTimer, deadlines, loops,
                new RebuildingReplica(local, rebuild), localRange, antiEntropy, cluster, backups, storage.disk(), metrics,
                rebuild);
        peers.reconcile(stored.topology());
        if (joining) {
            join(cluster, peers, config);
        }
        Membership m = cluster.membership();
        ClusterRangeSource rangeSource = new ClusterRangeSource(peers.ranges(m.readers()),
                ClusterRangeSource.replicasUnder(m.readers(), m.replicationFactor()), m.replicationFactor(),
                tuning.rangeBatchEntries(), tuning.rangeBatchBytes(), hlc::observeFromPeer);
        Coordinator coordinator = new Coordinator(selfId, new PlacementPlan(m), peers.replicas(), hlc, clock,
                config.requestTimeout(), deadlines, rangeSource, peers.hints(), metrics);
        peers.clockOffsets().onRefusalChange(coordinator::refuseWrites);
        JoinStream joinStream = new JoinStream(cluster, peers::range, peers.replicas()::get, local, localRange, new MoveProgress(config.dataDir(), MoveProgress.JOIN_FILE),
                tuning.changes(), config.requestTimeout());
        RebuildStream rebuildStream = new RebuildStream(cluster, peers::range, local,
                new MoveProgress(config.dataDir(), MoveProgress.REBUILD_FILE), tuning.changes(), config.requestTimeout(), rebuild,
                metrics.rebuildRecords());
        LeaveStream leaveStream = new LeaveStream(cluster, localRange, peers.replicas(),
                new MoveProgress(config.dataDir(), MoveProgress.LEAVE_FILE), tuning.changes(), config.requestTimeout());
        AtomicBoolean member = new AtomicBoolean(true);
        Consumer<Membership> useMembership = next -> {
            boolean stillMember = next.state(selfId) != null;
            if (stillMember) {
                peers.reconcile(next.topology()); // before any placement names a new member
            } else {
                peers.dropAll(); // before anti-entropy picks its peers: it has none now
                if (member.getAndSet(false)) {
                    log.info("this node is no longer a member of cluster '{}' (epoch {}): it left or was removed. It "
                            + "answers clients 503 and may be stopped; wipe its data dir before it joins again",
                            next.clusterName(), next.epoch());
                }
            }
            coordinator.usePlan(new PlacementPlan(next));
            if (stillMember) { // a node that left has no peers to read ranges from, and answers clients 503
                rangeSource.useNodes(peers.ranges(next.readers()),
                        ClusterRangeSource.replicasUnder(next.readers(), next.replicationFactor()));
            }
            ledger.useMembership(next.current(), next.inChange());
            antiEntropy.useMembership(next.current(), peers.antiEntropyPeers(next.current()));
            if (stillMember) {
                peers.dropAllBut(next.topology());
            }
            joinStream.onMembership(next);
            leaveStream.onMembership(next);
        };
        cluster.addListener(useMembership);

        BearerTokens tokens = bearerTokens(config.security(), executors.maintenance);
        if (config.security().tlsEnabled()) {
            LiveTls tls = config.security().tls();
            metrics.bindTlsCertificateExpiry(() -> tls.certificateExpiry().getEpochSecond());
            executors.maintenance.scheduleWithFixedDelay(() -> {
                try {
                    if (tls.refresh()) {
                        warnOfOwnCertificate(config);
                    }
                } catch (RuntimeException e) { // a task that throws is never run again
                    log.warn("reading the TLS files again failed; will retry", e);
                }
            }, LiveTls.REFRESH_SECONDS, LiveTls.REFRESH_SECONDS, TimeUnit.SECONDS);
        }
        HttpGateway gateway = new HttpGateway(coordinator,
                new MembershipAdmin(cluster, new Cleanup(storage, cluster::membership, cluster::newestEpochSeen, selfId), executors.maintenance),
                clock, config.maxValueBytes(), config.maxConnections(), tuning.rangeBatchBytes(), loops,
                () -> {
                    Membership now = cluster.membership();
                    boolean alone = now.topology().size() < 2; // as documented: no peers, hints or rounds
                    NodeStatus serving = NodeStatus.serving(selfId, now.topology().size(), now.replicationFactor(),
                            alone ? null : peers.peerStatus(), alone ? null : peers.hintStatus(),
                            alone ? null : antiEntropy.state(), storage.store().approximateBytes(),
                            storage.failures().summary(), peers.clockOffsets().writeRefusal());
                    Rebuild.State state = rebuild.state();
                    return state == Rebuild.State.SERVING ? serving : serving.rebuilding(new NodeStatus.Rebuilding(
                            state == Rebuild.State.CHECKING ? "checking" : "streaming",
                            (long) metrics.rebuildRecords().count()));
                },
                antiEntropy::repair, metrics, config.security().tls(), tokens,
                new BackupCoordinator(cluster::membership, peers::backupParticipant, peers::isUp, clock));
        // Stopped early: the gateway gets its grace for requests in progress only on a graceful stop.
        parts.add("HTTP gateway", graceful -> gateway.stop(graceful ? tuning.shutdownGrace() : Duration.ZERO));
        parts.add("transport, on a kill", peers.killTransport()); // peers see the crash before clients
        parts.add("heartbeats", peers.stopLiveness());
        parts.add("anti-entropy", graceful -> antiEntropy.close());
        // The record movers stop first, on a kill too: their scans end before the transport drops
        // its channels under them (grpc-java leaks the buffers of a stream cut that way).
        parts.add("join stream", graceful -> joinStream.close());
        parts.add("leave stream", graceful -> leaveStream.close());
        parts.add("rebuild stream", graceful -> rebuildStream.close());
        rebuild.listen(rebuildStream);

        peers.startLiveness();
        antiEntropy.start(peers.antiEntropyPeers(m.current()));
        useMembership.accept(m); // what the listener did not see: the stored membership, or the one joined
        ExpiryPurger purger = new ExpiryPurger(storage, clock, config.tombstoneGrace().toMillis(),
                ExpiryPurger.Pacing.DEFAULT, config.maxClockOffset().toMillis(),
                () -> peers.clockOffsets().writeRefusal() == null && !peers.clockOffsets().isAheadOfAPeer(), ledger);
        metrics.bindTombstones(purger::tombstonesHeldBack, purger::tombstonesPurged);
        long purgeMs = config.purgeInterval().toMillis();
        executors.maintenance.scheduleWithFixedDelay(() -> {
            try {
                purger.runOnce();
            } catch (RuntimeException e) {
                log.warn("purging expired records failed; will retry", e);
            }
        }, purgeMs, purgeMs, TimeUnit.MILLISECONDS);
        peers.announce();
        InetSocketAddress address;
        try {
            address = gateway.start(config.bindAddress(), httpPort);
        } catch (Exception e) {
            throw new StartupException("cannot listen for HTTP on " + config.bindAddress() + ":" + httpPort + ": "
                    + bindFailure(e));
        }
        if (config.security().tlsEnabled()) {
            warnOfOwnCertificate(config);
        }
        log.info("node {} serving {} on {} with data in {} (cluster of {}, replication factor {}{}{})",
                selfId, config.security().tlsEnabled() ? "HTTPS" : "HTTP", address,
                config.dataDir().toAbsolutePath().normalize(), m.topology().size(), m.replicationFactor(),
                config.fsync() ? ", fsync" : "", tokens != null ? ", " + tokens.summary() : "");
        warnOfPlainTraffic(config, address, tokens != null);
        peers.startHandoff();
        return address;
    }

    /**
     * Holds the node's ports while the warm-up runs, so that a port in use fails the start at once
     * as it always did, and neither the warm-up's own sockets nor anything else can take them
     * meanwhile; a stop asked for during the warm-up ends the start.
     */
    private static void warmUp(NodeConfig config, int httpPort) throws StartupException {
        if (config.warmUpRequests() == 0) {
            return;
        }
        List<ServerSocket> held = new ArrayList<>();
        try {
            hold(held, config.bindAddress(), config.self().grpcPort(), "gRPC");
            hold(held, config.bindAddress(), httpPort, "HTTP");
            RequestPathWarmup.run(config);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StartupException("stopped while warming up");
        } finally {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException e) {
                    log.debug("closing a held port", e);
                }
            }
        }
    }

    /** Binds {@code port} (0: none to hold) and adds its socket to {@code held}. */
    private static void hold(List<ServerSocket> held, String address, int port, String what)
            throws StartupException {
        if (port == 0) {
            return;
        }
        ServerSocket socket = null;
        try {
            socket = new ServerSocket();
            socket.setReuseAddress(true); // as the node's own listeners: a port in TIME_WAIT is free
            socket.bind(new InetSocketAddress(address, port));
            held.add(socket);
        } catch (IOException | RuntimeException e) {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // it never listened
                }
            }
            throw new StartupException("cannot listen for " + what + " on " + address + ":" + port + ": " + bindFailure(e));
        }
    }

    /**
     * Asks the members named in {@code --cluster} to let this new node join (docs/operations.md#growing-and-shrinking-a-cluster), one after
     * another, until one answers or the time is up; takes the membership it is given.
     */
    private static void join(ClusterMembership cluster, PeerWiring peers, NodeConfig config) throws StartupException {
        ClusterMember self = config.self();
        List<ClusterMember> seeds = config.topology().members().stream().filter(m -> !m.id().equals(self.id())).toList();
        if (seeds.isEmpty()) {
            throw new StartupException("--join needs --cluster to name at least one member of the running cluster "
                    + "besides this node's own entry");
        }
        Tuning.Changes tuning = config.tuning().changes();
        Duration patience = tuning.changeDeadline().multipliedBy(4);
        long deadline = System.nanoTime() + patience.toNanos();
        long nextWarning = System.nanoTime();
        String last = "no member answered";
        while (System.nanoTime() < deadline) {
            for (ClusterMember seed : seeds) {
                try {
                    Membership joined = peers.membershipPeer(seed.id())
                            .change(new MembershipChange(MembershipChange.Kind.JOIN, self))
                            .get(tuning.changeDeadline().toMillis() * 2, TimeUnit.MILLISECONDS);
                    cluster.adoptJoined(joined).get(tuning.changeDeadline().toMillis(), TimeUnit.MILLISECONDS);
                    log.info("joining cluster '{}' at epoch {} through {}", joined.clusterName(), joined.epoch(), seed.id());
                    return;
                } catch (ExecutionException e) {
                    Throwable t = Failures.unwrap(e.getCause());
                    if (t instanceof MembershipChangeException refused
                            && refused.reason() == MembershipChangeException.Reason.INVALID) {
                        throw new StartupException("cannot join through " + seed.id() + ": " + refused.getMessage());
                    }
                    last = seed.id() + " (" + seed.host() + ":" + seed.grpcPort() + "): " + t.getMessage();
                } catch (TimeoutException e) {
                    last = seed.id() + " (" + seed.host() + ":" + seed.grpcPort() + ") did not answer in time";
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StartupException("interrupted while joining");
                }
            }
            if (System.nanoTime() >= nextWarning) {
                log.warn("cannot join yet: {}; trying every member named in --cluster again for up to {} s in all",
                        last, patience.toSeconds());
                nextWarning = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            }
            try {
                Thread.sleep(tuning.retryInterval().toMillis()); // pacing between rounds of attempts
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StartupException("interrupted while joining");
            }
        }
        throw new StartupException("could not join the cluster: " + last);
    }

    /**
     * docs/operations.md#security: a node without TLS that listens beyond loopback says so at start,
     * as the image's {@code KVORUM_BIND=0.0.0.0} would otherwise serve plain traffic without a word.
     * HTTP and gRPC share the bind address and the TLS flags, so one line speaks of both.
     */
    private static void warnOfPlainTraffic(NodeConfig config, InetSocketAddress http, boolean tokens) {
        if (config.security().tlsEnabled() || http.getAddress().isLoopbackAddress()) {
            return;
        }
        log.warn("node {} serves plain HTTP on {}:{} and plain gRPC on {}:{}, beyond loopback: clients' requests{} and "
                        + "replication between nodes cross the network unencrypted, and anyone who reaches the gRPC port "
                        + "can act as a member; give --tls-cert, --tls-key and --tls-ca, or bind to 127.0.0.1 "
                        + "(docs/operations.md#security)", config.self().id(), config.bindAddress(), http.getPort(),
                config.bindAddress(), config.self().grpcPort(), tokens ? ", their bearer tokens" : "");
    }

    /** Peers refuse such a certificate with a line of their own; this end would only see them as down. */
    private static void warnOfOwnCertificate(NodeConfig config) {
        LiveTls tls = config.security().tls();
        for (String problem : tls.files().ownCertificateProblems(config.self().host(), Instant.now())) {
            log.warn("--tls-cert {}: {}; peers and clients will refuse this node's connections",
                    tls.files().certificate(), problem);
        }
        Set<String> names = MemberCertificate.names(tls.certificate());
        if (!names.contains(config.self().id())) {
            log.warn("--tls-cert {}: it names {}, not this node's id {}; peers refuse this node's calls and answers "
                    + "(a member's certificate names its id as CN or DNS name: ./kvorum certs DIR {})",
                    tls.files().certificate(), names.isEmpty() ? "no member" : String.join(", ", names),
                    config.self().id(), config.self().id());
        }
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
     * The membership stored in the data dir (it wins over {@code --cluster}, docs/operations.md#growing-and-shrinking-a-cluster), or null
     * when there is none yet: a first start, or a node started with {@code --join} that takes the
     * membership from the members it joins.
     */
    private static Membership storedMembership(NodeConfig config, MembershipStore store) throws StartupException {
        try {
            Files.createDirectories(config.dataDir());
            if (!config.join()) {
                return store.loadComparedWith(config.seed());
            }
            Membership existing = store.load();
            if (existing != null) {
                log.info("--join ignored: this node is a member already (stored membership, epoch {})", existing.epoch());
            }
            return existing;
        } catch (InvalidTopologyException e) {
            throw new StartupException(e.getMessage());
        } catch (IOException e) {
            throw dataDirUnusable(config, e);
        }
    }

    private static void removeLeftovers(MembershipStore store) {
        try {
            store.removeLeftovers();
        } catch (IOException e) {
            log.warn("cannot remove copies of the membership left in the data dir by an earlier start: {}", e.toString());
        }
    }

    /** Stores the membership {@code --cluster} seeded, now that the node has started on it. */
    private static void seed(MembershipStore store, Membership seed) throws StartupException {
        try {
            if (store.storeIfAbsent(seed)) {
                log.info("membership seeded from the options: cluster '{}', {} member(s), replication factor {}, epoch {}",
                        seed.clusterName(), seed.topology().size(), seed.replicationFactor(), seed.epoch());
            }
        } catch (IOException e) {
            throw new StartupException("cannot store the membership in " + store.file() + ": "
                    + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()));
        }
    }

    /** The one-line reason a data dir cannot be used, for the startup message (docs/operations.md#starting-nodes). */
    static StartupException dataDirUnusable(NodeConfig config, IOException e) {
        Path dir = config.dataDir();
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            return new StartupException("data dir " + dir + " is not a directory");
        }
        if (e instanceof AccessDeniedException denied) {
            return new StartupException("data dir " + dir + " is not writable (access denied: " + denied.getFile() + ")");
        }
        if (e instanceof FileSystemException fs) {
            return new StartupException("cannot use data dir " + dir + ": " + fs.getFile() + ": " + reasonOf(fs));
        }
        return new StartupException("cannot use data dir " + dir + ": "
                + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()));
    }

    /** What went wrong with a file, in words: the JDK leaves the reason out of some exceptions and says it by their class. */
    private static String reasonOf(FileSystemException fs) {
        if (fs.getReason() != null) {
            return fs.getReason();
        }
        if (fs instanceof NoSuchFileException) {
            return "no such file or directory, and it cannot be created there";
        }
        if (fs instanceof NotDirectoryException) {
            return "not a directory";
        }
        if (fs instanceof FileAlreadyExistsException) {
            return "exists, and is not a directory";
        }
        return fs.getClass().getSimpleName();
    }

    /** Why binding failed, for the one-line startup message; never "null". */
    static String bindFailure(Throwable e) {
        Throwable deepest = e;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException) {
                return "address already in use or not available";
            }
            if (t instanceof UnresolvedAddressException) {
                return "cannot resolve the address";
            }
            if (t.getMessage() != null) {
                deepest = t; // the socket's own reason (Netty's native bind error), under grpc-java's "Failed to bind"
            }
        }
        return deepest.getMessage() != null ? deepest.getMessage() : e.getClass().getSimpleName();
    }

    /**
     * Moves the clock past the store's ceiling over the timestamps it holds (at most 100 ms above the
     * newest), as if such a record had just been received: else, with the wall clock set back across
     * a restart, new writes would be stamped below the versions they replace and lose to them unseen
     * (and be acknowledged). After an ordinary restart the wall clock is past it already.
     */
    private static void startClockPastStored(HybridLogicalClock hlc, Clock clock, long storedCeiling,
                                             Duration maxClockOffset) {
        hlc.startPast(storedCeiling);
        long aheadMillis = HybridLogicalClock.physicalMillis(storedCeiling) - clock.currentTimeMillis();
        if (aheadMillis > maxClockOffset.toMillis()) {
            log.warn("the wall clock is {} ms behind the timestamps stored; new timestamps continue from those "
                    + "until the wall clock catches up (check this machine's time source)", aheadMillis);
        }
    }

    /**
     * This node's store's incarnation and whether it must rebuild (docs/operations.md#replacing-a-disk).
     * The store is empty when its directory did not exist before this start, or when it holds no
     * record and no incarnation was kept yet (a start that died before keeping one).
     */
    private static Rebuild openRebuild(NodeConfig config, StorageService storage, boolean storeExisted,
                                       boolean mayRebuild, Supplier<Set<String>> peerIds) throws StartupException {
        try {
            boolean empty = !storeExisted || (!Rebuild.kept(config.dataDir()) && storage.store().isEmpty());
            return Rebuild.open(config.self().id(), config.dataDir(), empty, mayRebuild, peerIds);
        } catch (IOException e) {
            throw dataDirUnusable(config, e);
        }
    }

    private static StorageService openStorage(NodeConfig config, NodeMetrics metrics) throws StartupException {
        String where = config.dataDir().toString();
        try {
            Files.createDirectories(config.dataDir());
            if (!Files.isWritable(config.dataDir())) {
                throw new StartupException("data dir " + where + " is not writable");
            }
            String owner = DataDirOwner.of(config.dataDir());
            if (owner != null && !owner.equals(config.self().id())) {
                throw new StartupException("data dir " + where + " belongs to node " + owner + ", not to --node-id "
                        + config.self().id() + ": start " + owner + " on it, or give " + config.self().id()
                        + " a data dir of its own");
            }
            DiskSpace disk = DiskSpace.of(config.dataDir(), config.minFreeDisk());
            String tooFull = disk.tooFullToOpen();
            if (tooFull != null) {
                throw new StartupException("data dir " + where + ": " + tooFull);
            }
            // The bucket index serves anti-entropy only, which a single node does not run.
            LevelDbStore store = LevelDbStore.open(config.dataDir().resolve("records"), config.fsync(),
                    config.tuning().storageCacheBytes(), config.topology().size() > 1);
            try {
                DataDirOwner.claim(config.dataDir(), config.self().id()); // the store's lock is held from here
            } catch (IOException e) {
                store.close();
                throw e;
            }
            metrics.bindDiskFree(disk::usableBytes);
            return new StorageService(store, config.storageReaders(), config.storageQueue(), disk, metrics,
                    config.requestTimeout(), System::nanoTime);
        } catch (IOException e) {
            // LevelDB's own errors are plain IOExceptions: "IO error: lock ..." when another process has it open.
            if (!(e instanceof FileSystemException) && String.valueOf(e.getMessage()).contains("lock")) {
                throw new StartupException("data dir " + where + " is in use by another process");
            }
            if (DamagedStoreException.isDamage(e)) {
                throw new StartupException("cannot use data dir " + where + ": " + e.getMessage() + "; with the node stopped, "
                        + "'kvorum repair-storage " + where + "' rebuilds the store from what it can read "
                        + "(docs/operations.md, \"A corrupt data file\")");
            }
            throw dataDirUnusable(config, e);
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
