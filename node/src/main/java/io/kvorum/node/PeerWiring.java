package io.kvorum.node;

import io.kvorum.node.KvorumNode.StartupException;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.antientropy.AntiEntropyResponders;
import io.kvorum.node.backup.BackupParticipant;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipPeer;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.HintSink;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.hints.HintStore;
import io.kvorum.node.hints.HintedHandoff;
import io.kvorum.node.http.NodeStatus;
import io.kvorum.node.liveness.ClockOffsets;
import io.kvorum.node.liveness.GuardedReplica;
import io.kvorum.node.liveness.Heartbeats;
import io.kvorum.node.liveness.Incarnations;
import io.kvorum.node.liveness.ObservedAntiEntropyPeer;
import io.kvorum.node.liveness.ObservedRangeSource;
import io.kvorum.node.liveness.PeerLiveness;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.storage.DamagedStoreException;
import io.kvorum.node.storage.DiskSpace;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.util.EventLoops;
import io.kvorum.node.util.NodeThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The part of a node that deals with its peers, which come and go with the membership: the
 * transport, liveness (heartbeats) and hinted handoff, as {@link KvorumNode} uses them.
 * {@link #connect} and {@link #disconnect} add and drop one peer everywhere: its replica (guarded
 * by liveness), range source, anti-entropy and membership handles, its heartbeats and its metrics.
 * The maps it hands out are live views that gain a peer before any placement names it.
 *
 * <p>Lifecycle: {@link #start} adds the hint store, the transport and the hint delivery to the
 * node's parts, in that order. The caller adds {@link #killTransport} and then
 * {@link #stopLiveness} after the HTTP gateway: heartbeats stop first, and on a kill the transport
 * stops before the gateway, so that peers see the node vanish before its clients do, as in a crash.
 */
final class PeerWiring {

    private static final Logger log = LoggerFactory.getLogger(PeerWiring.class);

    private final String selfId;
    private final PeerTransport transport;
    private final PeerLiveness liveness;
    private final ClockOffsets clockOffsets;
    private final Heartbeats heartbeats;
    private final HintStore hintStore; // null without hinted handoff
    private final HintedHandoff handoff; // null without hinted handoff
    private final NodeMetrics metrics;
    private final Duration announceWait;
    private final Map<String, ClusterMember> connected = new ConcurrentHashMap<>();
    private final Map<String, Replica> replicas = new ConcurrentHashMap<>();
    private final Map<String, RangeSource> ranges = new ConcurrentHashMap<>();
    private final Map<String, AntiEntropyPeer> antiEntropyPeers = new ConcurrentHashMap<>();
    private final Map<String, MembershipPeer> membershipPeers = new ConcurrentHashMap<>();
    private final Map<String, BackupParticipant> backupParticipants = new ConcurrentHashMap<>();
    /** The remote replicas alone, for hinted handoff. */
    private final Map<String, Replica> peerReplicas;
    private final Lifecycle.Stop stopLiveness;
    private final Lifecycle.Stop killTransport;

    private PeerWiring(String selfId, PeerTransport transport, PeerLiveness liveness, ClockOffsets clockOffsets,
                       Heartbeats heartbeats, HintStore hintStore, HintedHandoff handoff, NodeMetrics metrics,
                       Duration announceWait, Lifecycle.Stop stopLiveness, Lifecycle.Stop killTransport,
                       Map<String, Replica> peerReplicas) {
        this.peerReplicas = peerReplicas;
        this.selfId = selfId;
        this.transport = transport;
        this.liveness = liveness;
        this.clockOffsets = clockOffsets;
        this.heartbeats = heartbeats;
        this.hintStore = hintStore;
        this.handoff = handoff;
        this.metrics = metrics;
        this.announceWait = announceWait;
        this.stopLiveness = stopLiveness;
        this.killTransport = killTransport;
    }

    /**
     * Starts the transport (serving the local replica, range source, anti-entropy responders,
     * membership and the heartbeats made here) and wires liveness and hinted handoff, with no peer
     * yet: {@link #reconcile} connects the members.
     *
     * @param local      this node's replica and range source, also in {@link #replicas} and {@link #ranges}
     * @param scheduler  runs the transport's own timeouts (e.g. of range batches)
     * @param disk       what hint writes leave free on the data directory's file system
     * @param metrics    reports each peer's liveness and hints; {@link #hintStatus} reads the hints back from it
     * @param incarnations what pings carry of this node's store and answer of the peers' (docs/operations.md#replacing-a-disk)
     */
    static PeerWiring start(NodeConfig config, Clock clock, PeerTransport.Factory transports, Lifecycle parts,
                            ScheduledExecutorService scheduler, RequestTimer deadlines, EventLoops loops,
                            Replica local, RangeSource localRange, AntiEntropyResponders antiEntropy,
                            ClusterMembership membership, BackupParticipant backup, DiskSpace disk, NodeMetrics metrics,
                            Incarnations incarnations)
            throws StartupException {
        Tuning tuning = config.tuning();
        String selfId = config.self().id();
        Duration heartbeatInterval = tuning.liveness().heartbeatInterval();
        PeerLiveness liveness = new PeerLiveness(List.of(), clock, new PeerLiveness.Detection(
                config.phiConvictThreshold(), heartbeatInterval, tuning.liveness().acceptablePause(),
                tuning.liveness().minStdDeviation()));
        // A reading counts for ten heartbeats: a peer that stopped answering soon counts for nothing.
        ClockOffsets clockOffsets = new ClockOffsets(clock, config.maxClockOffset(),
                heartbeatInterval.multipliedBy(10));
        metrics.bindClockWritesRefused(() -> clockOffsets.writeRefusal() != null);
        ScheduledThreadPoolExecutor livenessExecutor = NodeThreads.scheduled("liveness", 1);
        Heartbeats heartbeats = new Heartbeats(liveness, clockOffsets, livenessExecutor, heartbeatInterval, clock,
                incarnations);
        Runnable stopHeartbeats = () -> {
            heartbeats.close();
            livenessExecutor.shutdownNow();
        };
        Lifecycle.Stop stopLiveness = graceful -> stopHeartbeats.run();
        try {
            HintStore store = config.hintedHandoff() ? openHints(config, clock, disk, metrics) : null;
            if (store != null) {
                parts.add("hint store", graceful -> store.close()); // flushes queued hints
            }
            PeerTransport transport = transports.create(config, scheduler, deadlines, loops);
            // Gracefully, the transport closes after hint delivery and fails the replica calls still
            // waiting, whose writes are hinted before it returns: before the hint store closes. On a
            // kill, killTransport has stopped it already, unless the start failed before that was added.
            AtomicBoolean transportStopped = new AtomicBoolean();
            Lifecycle.Stop stopTransport = graceful -> {
                if (transportStopped.compareAndSet(false, true)) {
                    if (graceful) {
                        transport.close();
                    } else {
                        transport.kill();
                    }
                }
            };
            parts.add("transport", stopTransport);
            Lifecycle.Stop killTransport = graceful -> {
                if (!graceful) {
                    stopTransport.stop(false);
                }
            };
            try {
                transport.start(new PeerTransport.LocalServices(local, localRange, antiEntropy, heartbeats, membership,
                        backup));
            } catch (IOException e) {
                throw new StartupException("cannot listen for gRPC on " + config.bindAddress() + ":"
                        + config.self().grpcPort() + ": " + KvorumNode.bindFailure(e));
            }
            liveness.addListener(new PeerLiveness.Listener() {
                @Override
                public void peerUp(String peer) {
                }

                /** Only a failed connection: a suspected peer's stream may still carry its answers. */
                @Override
                public void peerDown(String peer) {
                    transport.abandonStream(peer);
                }

                @Override
                public void peerSuspected(String peer) {
                    metrics.peerSuspected(peer);
                }
            });
            Map<String, Replica> peerReplicas = new ConcurrentHashMap<>();
            PeerWiring wiring;
            if (store == null) {
                wiring = new PeerWiring(selfId, transport, liveness, clockOffsets, heartbeats, null, null, metrics,
                        tuning.announceWait(), stopLiveness, killTransport, peerReplicas);
            } else {
                HintedHandoff handoff = new HintedHandoff(store, peerReplicas, tuning.hints().checkInterval(),
                        tuning.hints().window(), tuning.hints().windowBytes(), metrics);
                parts.add("hint delivery", graceful -> handoff.close()); // before the peers it delivers to close
                liveness.addListener(peer -> handoff.deliverPending()); // at once, not at the next check
                wiring = new PeerWiring(selfId, transport, liveness, clockOffsets, heartbeats, store, handoff, metrics,
                        tuning.announceWait(), stopLiveness, killTransport, peerReplicas);
            }
            wiring.replicas.put(selfId, local);
            wiring.ranges.put(selfId, localRange);
            wiring.backupParticipants.put(selfId, backup);
            membership.usePeers(wiring.membershipPeers::get);
            membership.useNewcomerProposals(wiring::proposeToNewcomer);
            return wiring;
        } catch (StartupException | RuntimeException e) {
            stopHeartbeats.run(); // not in parts yet
            throw e;
        }
    }

    /** Connects every member of {@code members} not connected yet (this node aside). */
    synchronized void reconcile(Topology members) {
        for (ClusterMember m : members.members()) {
            if (m.id().equals(selfId)) {
                continue;
            }
            ClusterMember known = connected.get(m.id());
            if (known != null && !known.equals(m)) {
                disconnect(m.id(), "its address changed");
            }
            if (!connected.containsKey(m.id())) {
                connect(m);
            }
        }
    }

    /** Disconnects every connected peer that is not in {@code members}. */
    synchronized void dropAllBut(Topology members) {
        for (String id : List.copyOf(connected.keySet())) {
            if (members.member(id) == null) {
                disconnect(id, "no longer a member");
            }
        }
    }

    /**
     * Disconnects every peer, once this node is no longer a member: the members refuse its calls,
     * so its heartbeats would only make them log refusals and it log them down.
     */
    synchronized void dropAll() {
        for (String id : List.copyOf(connected.keySet())) {
            disconnect(id, "this node is no longer a member");
        }
    }

    private void connect(ClusterMember m) {
        PeerTransport.Peer peer = transport.connect(m);
        liveness.addPeer(m.id());
        // Read at every scrape, until the member is removed (disconnect forgets it).
        metrics.bindPeerUp(m.id(), () -> liveness.isUp(m.id()));
        metrics.bindPeerPhi(m.id(), () -> liveness.phi(m.id()));
        metrics.bindClockOffset(m.id(), () -> {
            ClockOffsets.Offset o = clockOffsets.offset(m.id());
            return o == null ? Double.NaN : o.millis() / 1000.0;
        });
        if (hintStore != null) {
            metrics.bindHintsPending(m.id(), () -> hintStore.pending(m.id()));
        }
        Replica guarded = new GuardedReplica(peer.replica(), liveness, heartbeats);
        ranges.put(m.id(), new ObservedRangeSource(m.id(), peer.range(), liveness));
        antiEntropyPeers.put(m.id(), new ObservedAntiEntropyPeer(peer.antiEntropy(), liveness));
        membershipPeers.put(m.id(), peer.membership());
        backupParticipants.put(m.id(), peer.backup());
        peerReplicas.put(m.id(), guarded);
        replicas.put(m.id(), guarded);
        heartbeats.addPeer(peer.probe());
        connected.put(m.id(), m);
        log.debug("connected to {}", m);
    }

    private void disconnect(String id, String why) {
        connected.remove(id);
        heartbeats.removePeer(id);
        replicas.remove(id);
        peerReplicas.remove(id);
        ranges.remove(id);
        antiEntropyPeers.remove(id);
        membershipPeers.remove(id);
        backupParticipants.remove(id);
        liveness.removePeer(id);
        transport.disconnect(id);
        metrics.forgetMember(id);
        log.info("disconnected from {}: {}", id, why);
    }

    /** Every replica, this node's included, by id: a live map. */
    Map<String, Replica> replicas() {
        return replicas;
    }

    /** The range sources of {@code members} (this node's included if it is one). */
    Map<String, RangeSource> ranges(Topology members) {
        Map<String, RangeSource> out = new LinkedHashMap<>();
        for (ClusterMember m : members.members()) {
            RangeSource r = ranges.get(m.id());
            if (r != null) {
                out.put(m.id(), r);
            }
        }
        return out;
    }

    /**
     * Proposes {@code next} to {@code newcomer}, a new node whose join {@code next} starts, before
     * any member routes to it (docs/architecture.md#how-a-join-moves-records): over a connection of
     * its own, closed once answered, since the new node is no peer yet ({@link #reconcile} connects
     * it once this node adopts {@code next}).
     */
    CompletableFuture<Void> proposeToNewcomer(ClusterMember newcomer, Membership next) {
        PeerTransport.Peer peer;
        synchronized (this) {
            if (connected.containsKey(newcomer.id())) {
                return membershipPeers.get(newcomer.id()).propose(next);
            }
            peer = transport.connect(newcomer);
        }
        return peer.membership().propose(next).whenComplete((ok, error) -> {
            synchronized (this) {
                if (!connected.containsKey(newcomer.id())) {
                    transport.disconnect(newcomer.id());
                }
            }
        });
    }

    /** One peer's membership service, or null when it is not connected. */
    MembershipPeer membershipPeer(String id) {
        return membershipPeers.get(id);
    }

    /** A member's backup side (this node's own included), or null when it is not connected. */
    BackupParticipant backupParticipant(String id) {
        return backupParticipants.get(id);
    }

    /** Whether liveness holds {@code id} up (this node always is). */
    boolean isUp(String id) {
        return id.equals(selfId) || liveness.isUp(id);
    }

    /** One peer's raw range source, or null. */
    RangeSource range(String id) {
        return ranges.get(id);
    }

    /** The anti-entropy handles of the peers among {@code members}. */
    List<AntiEntropyPeer> antiEntropyPeers(Topology members) {
        List<AntiEntropyPeer> out = new ArrayList<>();
        for (ClusterMember m : members.members()) {
            AntiEntropyPeer p = antiEntropyPeers.get(m.id());
            if (p != null) {
                out.add(p);
            }
        }
        return out;
    }

    /** Where the coordinator hints writes a peer missed. */
    HintSink hints() {
        return hintStore != null ? hintStore : HintSink.NONE;
    }

    /** What this node knows of each peer, by id in ascending order. */
    Map<String, NodeStatus.Peer> peerStatus() {
        Map<String, NodeStatus.Peer> peers = new LinkedHashMap<>();
        liveness.snapshot().forEach((peer, s) -> {
            ClusterMember m = connected.get(peer);
            if (m != null) {
                ClockOffsets.Offset clock = clockOffsets.offset(peer);
                peers.put(peer, new NodeStatus.Peer(s.state().jsonName(), s.sinceMillis(), s.rttMicros(),
                        m.host() + ":" + m.httpPort(), clock == null ? null : clock.millis()));
            }
        });
        return peers;
    }

    /** How far each peer's clock is from this node's, and whether this node may stamp writes. */
    ClockOffsets clockOffsets() {
        return clockOffsets;
    }

    /** The hinted-handoff counters for {@code /v0/status}; null without hinted handoff. */
    NodeStatus.Hints hintStatus() {
        return hintStore == null ? null : new NodeStatus.Hints(metrics.hintsPendingByPeer(),
                metrics.hintsDeliveredTotal(), metrics.hintsDroppedTotal());
    }

    /** Starts the heartbeats. */
    void startLiveness() {
        heartbeats.start();
    }

    /**
     * Tells the peers this node has started and waits, within the announce wait, until each has
     * reached it back or was found down: from then on every live peer serves this node's requests
     * and sends it theirs (docs/operations.md#how-replicas-converge "Liveness").
     */
    void announce() {
        try {
            heartbeats.announce().get(announceWait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.info("not every peer answered this node's announcement within {} ms; serving anyway", announceWait.toMillis());
        } catch (ExecutionException e) {
            log.warn("announcing this node to its peers failed; serving anyway", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Starts delivering hints. */
    void startHandoff() {
        if (handoff != null) {
            handoff.start();
        }
    }

    /** Stops the heartbeats and their executor. */
    Lifecycle.Stop stopLiveness() {
        return stopLiveness;
    }

    /**
     * On a kill ({@code stop(false)}), kills the transport; on a graceful stop, nothing (the
     * transport closes at its own place in the lifecycle).
     */
    Lifecycle.Stop killTransport() {
        return killTransport;
    }

    private static HintStore openHints(NodeConfig config, Clock clock, DiskSpace disk, NodeMetrics metrics) throws StartupException {
        HintStore.Limits limits = new HintStore.Limits(config.hintMaxBytesPerPeer(), config.hintMaxAge(),
                config.storageQueue(), config.tuning().hints().queueBytes(), disk);
        try {
            return HintStore.open(config.dataDir().resolve("hints"), config.fsync(), limits, clock, metrics);
        } catch (IOException e) {
            // Hints are expendable (docs/operations.md, "A corrupt data file"): say how to drop them.
            String remedy = DamagedStoreException.isDamage(e)
                    ? "; hints are expendable: delete " + config.dataDir().resolve("hints") + " and start the node again "
                            + "(anti-entropy repairs what they carried)"
                    : "";
            throw new StartupException("cannot open hints in " + config.dataDir() + ": " + e.getMessage() + remedy);
        }
    }
}
