package io.kvorum.node;

import io.kvorum.node.KvorumNode.StartupException;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.HintSink;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.liveness.GuardedReplica;
import io.kvorum.node.liveness.Heartbeats;
import io.kvorum.node.liveness.PeerLiveness;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.antientropy.AntiEntropyResponders;
import io.kvorum.node.hints.HintStore;
import io.kvorum.node.hints.HintedHandoff;
import io.kvorum.node.http.NodeStatus;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.util.NodeThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The part of a node that deals with its peers: the transport, liveness (heartbeats) and hinted
 * handoff, as {@link KvorumNode} uses them. A single-node cluster has {@link #NONE}: no peers, no
 * heartbeats, no hints, and nothing to start or stop.
 *
 * @param replicas         the peers as replicas (guarded by liveness), by node id
 * @param ranges           the peers' range sources, by node id
 * @param antiEntropyPeers the peers to run anti-entropy rounds with
 * @param hints            where the coordinator hints writes a peer missed
 * @param peerStatus       what this node knows of each peer, for {@code /v0/status}; null in {@link #NONE}
 * @param hintStatus       the hinted-handoff counters for {@code /v0/status}; null without hinted handoff
 * @param startLiveness    starts the heartbeats
 * @param announce         tells the peers this node started and waits for them, boundedly
 * @param startHandoff     starts delivering hints
 * @param stopLiveness     stops the heartbeats and their executor
 * @param killTransport    on a kill ({@code stop(false)}), kills the transport; on a graceful stop,
 *                         nothing (the transport closes at its own place in the lifecycle)
 */
record PeerWiring(Map<String, Replica> replicas, Map<String, RangeSource> ranges,
                  List<AntiEntropyPeer> antiEntropyPeers, HintSink hints,
                  Supplier<Map<String, NodeStatus.Peer>> peerStatus, Supplier<NodeStatus.Hints> hintStatus,
                  Runnable startLiveness, Runnable announce, Runnable startHandoff, Lifecycle.Stop stopLiveness,
                  Lifecycle.Stop killTransport) {

    private static final Logger log = LoggerFactory.getLogger(PeerWiring.class);

    /** A single-node cluster's. */
    static final PeerWiring NONE = new PeerWiring(Map.of(), Map.of(), List.of(), HintSink.NONE, () -> null, () -> null,
            () -> { }, () -> { }, () -> { }, graceful -> { }, graceful -> { });

    /**
     * Starts the transport (serving the local replica, range source and anti-entropy responders,
     * and the heartbeats made here) and wires liveness and hinted handoff. Adds the hint store, the
     * transport and the hint delivery to {@code parts}, in that order. The caller adds
     * {@link #killTransport} and then {@link #stopLiveness} after the HTTP gateway: heartbeats stop
     * first, and on a kill the transport stops before the gateway, so that peers see the node
     * vanish before its clients do, as in a crash.
     *
     * @param scheduler runs the transport's own timeouts (e.g. of range batches)
     * @param metrics   reports each peer's liveness and hints; {@link #hintStatus} reads the hints back from it
     */
    static PeerWiring start(NodeConfig config, Clock clock, PeerTransport.Factory transports, Lifecycle parts,
                            ScheduledExecutorService scheduler, RequestTimer deadlines,
                            Replica local, RangeSource localRange, AntiEntropyResponders antiEntropy,
                            NodeMetrics metrics)
            throws StartupException {
        Tuning tuning = config.tuning();
        String selfId = config.self().id();
        PeerLiveness liveness = new PeerLiveness(config.topology().members().stream().map(m -> m.id())
                .filter(id -> !id.equals(selfId)).toList(), clock, tuning.liveness().missesToDown());
        liveness.snapshot().keySet().forEach(peer ->
                metrics.bindPeerUp(peer, () -> liveness.state(peer) == PeerLiveness.State.UP));
        ScheduledThreadPoolExecutor livenessExecutor = NodeThreads.scheduled("liveness", 1);
        Heartbeats heartbeats = new Heartbeats(liveness, livenessExecutor, tuning.liveness().heartbeatInterval(), clock);
        Runnable stopLiveness = () -> {
            heartbeats.close();
            livenessExecutor.shutdownNow();
        };
        try {
            return start(config, clock, transports, parts, scheduler, deadlines,
                    new PeerTransport.LocalServices(local, localRange, antiEntropy, heartbeats),
                    liveness, heartbeats, graceful -> stopLiveness.run(), metrics);
        } catch (StartupException | RuntimeException e) {
            stopLiveness.run(); // not in parts yet
            throw e;
        }
    }

    private static PeerWiring start(NodeConfig config, Clock clock, PeerTransport.Factory transports, Lifecycle parts,
                                    ScheduledExecutorService scheduler, RequestTimer deadlines,
                                    PeerTransport.LocalServices local, PeerLiveness liveness, Heartbeats heartbeats,
                                    Lifecycle.Stop stopLiveness, NodeMetrics metrics) throws StartupException {
        Tuning tuning = config.tuning();
        Optional<HintStore> store = config.hintedHandoff() ? Optional.of(openHints(config, clock, metrics))
                : Optional.empty();
        store.ifPresent(s -> parts.add("hint store", graceful -> s.close())); // flushes queued hints
        PeerTransport transport = transports.create(config, scheduler, deadlines);
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
            transport.start(local);
        } catch (IOException e) {
            throw new StartupException("cannot listen for gRPC on " + config.bindAddress() + ":"
                    + config.self().grpcPort() + ": " + KvorumNode.bindFailure(e));
        }
        liveness.addListener(new PeerLiveness.Listener() {
            @Override
            public void peerUp(String peer) {
            }

            @Override
            public void peerDown(String peer) {
                transport.abandonStream(peer);
            }
        });
        Map<String, Replica> peers = new HashMap<>();
        for (Replica peer : transport.replicas().values()) {
            peers.put(peer.nodeId(), new GuardedReplica(peer, liveness, heartbeats));
        }
        Runnable startLiveness = () -> heartbeats.start(transport.probes());
        Runnable announce = () -> announce(heartbeats, tuning.announceWait());
        if (store.isEmpty()) {
            return new PeerWiring(peers, transport.ranges(), transport.antiEntropyPeers(), HintSink.NONE,
                    () -> peerStatus(liveness, config.topology()), () -> null, startLiveness, announce, () -> { }, stopLiveness,
                    killTransport);
        }
        HintStore hints = store.get();
        peers.keySet().forEach(peer -> metrics.bindHintsPending(peer, () -> hints.pending(peer)));
        HintedHandoff handoff = new HintedHandoff(hints, peers, tuning.hints().checkInterval(), tuning.hints().window(),
                metrics);
        parts.add("hint delivery", graceful -> handoff.close()); // before the peers it delivers to close
        liveness.addListener(peer -> handoff.deliverPending()); // at once, not at the next check
        return new PeerWiring(peers, transport.ranges(), transport.antiEntropyPeers(), hints,
                () -> peerStatus(liveness, config.topology()), () -> new NodeStatus.Hints(metrics.hintsPendingByPeer(),
                        metrics.hintsDeliveredTotal(), metrics.hintsDroppedTotal()),
                startLiveness, announce, handoff::start, stopLiveness, killTransport);
    }

    private static HintStore openHints(NodeConfig config, Clock clock, NodeMetrics metrics) throws StartupException {
        HintStore.Limits limits = new HintStore.Limits(config.hintMaxBytesPerPeer(), config.hintMaxAge(),
                config.storageQueue(), config.tuning().hints().queueBytes());
        try {
            return HintStore.open(config.dataDir().resolve("hints"), config.fsync(), limits, clock, metrics);
        } catch (IOException e) {
            throw new StartupException("cannot open hints in " + config.dataDir() + ": " + e.getMessage());
        }
    }

    /**
     * Tells the peers this node has started and waits, within {@code wait}, until each has reached
     * it back or was found down: from then on every live peer serves this node's requests and sends
     * it theirs (SPEC §3 "Liveness").
     */
    private static void announce(Heartbeats heartbeats, Duration wait) {
        try {
            heartbeats.announce().get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.info("not every peer answered this node's announcement within {} ms; serving anyway", wait.toMillis());
        } catch (ExecutionException e) {
            log.warn("announcing this node to its peers failed; serving anyway", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What this node knows of each peer, by id in ascending order. */
    private static Map<String, NodeStatus.Peer> peerStatus(PeerLiveness liveness, Topology topology) {
        Map<String, NodeStatus.Peer> peers = new LinkedHashMap<>();
        liveness.snapshot().forEach((peer, s) -> {
            ClusterMember m = topology.member(peer);
            peers.put(peer, new NodeStatus.Peer(s.state().jsonName(), s.sinceMillis(), s.rttMicros(),
                    m.host() + ":" + m.httpPort()));
        });
        return peers;
    }
}
