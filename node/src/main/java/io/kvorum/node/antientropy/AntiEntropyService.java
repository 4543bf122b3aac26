package io.kvorum.node.antientropy;

import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.antientropy.AntiEntropyMessage.Open;
import io.kvorum.node.antientropy.RepairException.Reason;
import io.kvorum.node.metrics.NodeMetrics;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's anti-entropy (docs/operations.md#how-replicas-converge): the rounds it starts, every {@code --anti-entropy-interval} and
 * on {@code POST /v0/repair}, and the rounds its peers start with it.
 *
 * <p>Runs: a run is one round with each peer in turn (by id), each over its own stream
 * ({@link AntiEntropyInitiator}); a peer that cannot be reached fails its round only, and the run
 * goes on with the others. One run at a time: a run never overlaps the previous one. A
 * {@link #repair()} asked for while a run is in progress runs right after it, and requests that
 * arrive meanwhile share that next run, so at most one run waits. A periodic run is due a jittered
 * interval (±20%) after the previous run ended, and is skipped while another run is in progress.
 *
 * <p>Served rounds: {@link #openResponder} creates the responder side of a round a peer opened, at
 * most one per peer at a time in total ({@code maxServed}), so memory stays bounded by a tree and a
 * few batches per peer.
 *
 * <p>Threading: all work runs on {@code executor} (named {@code anti-entropy}); sessions confine
 * their state to a serial executor over it; trees and bucket scans run on the reader thread of the
 * {@link RepairStorage}, never on the storage read pool.
 *
 * <p>Lifecycle: construct (which starts maintaining this node's trees), {@link #start} with the
 * peers once the transport exists, {@link #close} before the transport and storage close: it stops
 * scheduling, cancels the rounds in progress and closes the {@link RepairStorage} it was given.
 */
public final class AntiEntropyService implements AntiEntropyResponders, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AntiEntropyService.class);

    private final String selfId;
    private volatile Topology topology;
    private volatile Placement placement;
    private final int replicationFactor;
    private final RepairStorage storage;
    private final ScheduledExecutorService executor;
    private final Duration interval;
    private final Duration idleTimeout;
    private final int fanoutBits;
    private final int depth;
    private final Semaphore servedPermits;
    private final Set<AntiEntropySession> sessions = ConcurrentHashMap.newKeySet();
    private final Map<String, AntiEntropyState.LastRound> lastRounds = new ConcurrentHashMap<>();
    private final NodeMetrics metrics;
    private final RepairLedger ledger;
    /** Counts the records rounds move, initiated or served, as they move them. */
    private final AntiEntropySession.RecordFlow recordFlow;

    private List<AntiEntropyPeer> peers = List.of(); // guarded by this
    private CompletableFuture<RepairReport> running; // guarded by this
    private CompletableFuture<RepairReport> queued; // guarded by this
    private ScheduledFuture<?> nextTick; // guarded by this
    private boolean closed; // guarded by this

    /**
     * @param replicationFactor the {@code --replication-factor}: which keys each pair compares
     * @param interval          time between periodic runs; zero turns them off
     * @param idleTimeout       how long a round may wait for its peer before it fails
     * @param metrics           counts the rounds by peer and outcome, and the records sent and received
     * @param ledger            learns of the rounds this node starts and completes
     */
    public AntiEntropyService(String selfId, Topology topology, int replicationFactor, RepairStorage storage,
                              ScheduledExecutorService executor, Duration interval, Duration idleTimeout,
                              NodeMetrics metrics, RepairLedger ledger) {
        this(selfId, topology, replicationFactor, storage, executor, interval, idleTimeout,
                MerkleTree.DEFAULT_FANOUT_BITS, MerkleTree.DEFAULT_DEPTH, metrics, ledger);
    }

    /** With a tree shape of its own (tests use small trees) and meters of its own. */
    public AntiEntropyService(String selfId, Topology topology, int replicationFactor, RepairStorage storage,
                              ScheduledExecutorService executor, Duration interval, Duration idleTimeout,
                              int fanoutBits, int depth, RepairLedger ledger) {
        this(selfId, topology, replicationFactor, storage, executor, interval, idleTimeout, fanoutBits, depth,
                NodeMetrics.unregistered(), ledger);
    }

    private AntiEntropyService(String selfId, Topology topology, int replicationFactor, RepairStorage storage,
                               ScheduledExecutorService executor, Duration interval, Duration idleTimeout,
                               int fanoutBits, int depth, NodeMetrics metrics, RepairLedger ledger) {
        this.metrics = metrics;
        this.ledger = ledger;
        Counter sent = metrics.antiEntropyRecords(NodeMetrics.Direction.SENT);
        Counter received = metrics.antiEntropyRecords(NodeMetrics.Direction.RECEIVED);
        this.recordFlow = new AntiEntropySession.RecordFlow() {
            @Override
            public void sent(int records) {
                sent.increment(records);
            }

            @Override
            public void received(int records) {
                received.increment(records);
            }
        };
        this.selfId = selfId;
        this.topology = topology;
        this.placement = new Placement(topology);
        this.replicationFactor = replicationFactor;
        this.storage = storage;
        this.executor = executor;
        this.interval = interval;
        this.idleTimeout = idleTimeout;
        this.fanoutBits = fanoutBits;
        this.depth = depth;
        this.servedPermits = new Semaphore(Math.max(2, topology.size() - 1));
        if (topology.size() > 1 && topology.member(selfId) != null) {
            storage.maintainTrees(selfId, topology, replicationFactor, fanoutBits, depth);
        }
    }

    /** Sets the peers to run rounds with and starts the periodic runs (if the interval is not zero). */
    public synchronized void start(List<AntiEntropyPeer> peers) {
        setPeers(peers);
        if (!interval.isZero()) {
            scheduleTick();
        }
    }

    private void setPeers(List<AntiEntropyPeer> peers) {
        List<AntiEntropyPeer> sorted = new ArrayList<>(peers);
        sorted.sort(Comparator.comparing(AntiEntropyPeer::nodeId));
        this.peers = List.copyOf(sorted);
    }

    /**
     * Compares with {@code peers} over the keys that {@code replicas} places, from the next round on,
     * after a membership change: the replicas of the current membership, with this node among them
     * (a joining node runs no rounds until it is one). This node's trees are rebuilt for them.
     */
    public synchronized void useMembership(Topology replicas, List<AntiEntropyPeer> peers) {
        if (replicas.equals(topology)) {
            setPeers(peers);
            return;
        }
        this.topology = replicas;
        this.placement = new Placement(replicas);
        boolean member = replicas.member(selfId) != null;
        setPeers(member ? peers : List.of());
        if (member && replicas.size() > 1) {
            storage.maintainTrees(selfId, replicas, replicationFactor, fanoutBits, depth);
        }
    }

    /**
     * Runs a round with every peer, after the run in progress if there is one. Completes with the
     * report once every round has ended, whether or not each succeeded; never fails, except with a
     * {@link RepairException} after {@link #close}.
     */
    public synchronized CompletableFuture<RepairReport> repair() {
        if (closed) {
            return CompletableFuture.failedFuture(new RepairException(Reason.CANCELLED, "the node is shutting down"));
        }
        if (running == null) {
            return startRun("on request");
        }
        if (queued == null) {
            queued = new CompletableFuture<>();
        }
        return queued;
    }

    private synchronized void scheduleTick() {
        if (closed) {
            return;
        }
        long ms = interval.toMillis();
        long delay = Math.max(1, ms + ThreadLocalRandom.current().nextLong(-ms / 5, ms / 5 + 1));
        try {
            nextTick = executor.schedule(this::tick, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // shutting down
        }
    }

    private void tick() {
        CompletableFuture<RepairReport> run;
        synchronized (this) {
            if (closed) {
                return;
            }
            run = running != null ? running : startRun("periodic");
        }
        run.whenComplete((report, error) -> scheduleTick());
    }

    /** Starts a run now; the caller holds the lock and has checked that none is running. */
    private CompletableFuture<RepairReport> startRun(String why) {
        CompletableFuture<RepairReport> run = runRounds(why);
        running = run;
        run.whenComplete((report, error) -> runEnded());
        return run;
    }

    private synchronized void runEnded() {
        running = null;
        if (queued != null) {
            CompletableFuture<RepairReport> waiting = queued;
            queued = null;
            if (closed) {
                waiting.completeExceptionally(new RepairException(Reason.CANCELLED, "the node is shutting down"));
            } else {
                startRun("on request").whenComplete((report, error) -> {
                    if (error != null) {
                        waiting.completeExceptionally(error);
                    } else {
                        waiting.complete(report);
                    }
                });
            }
        }
    }

    private CompletableFuture<RepairReport> runRounds(String why) {
        long start = System.nanoTime();
        List<RoundStats> rounds = new ArrayList<>();
        SortedMap<String, String> failed = new TreeMap<>();
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (AntiEntropyPeer peer : peers) {
            // One round at a time; each callback runs after the previous one, so the lists need no lock.
            chain = chain.thenCompose(v -> roundWith(peer).handle((stats, error) -> {
                long now = System.currentTimeMillis();
                metrics.antiEntropyRound(peer.nodeId(), outcomeOf(error)).increment();
                if (error == null) {
                    rounds.add(stats);
                    lastRounds.put(peer.nodeId(), new AntiEntropyState.LastRound(now, true,
                            stats.recordsSent() + stats.recordsReceived(), stats.durationMs(), null));
                } else {
                    String failure = RepairException.of(error).getMessage();
                    failed.put(peer.nodeId(), failure);
                    lastRounds.put(peer.nodeId(), new AntiEntropyState.LastRound(now, false, 0, 0, failure));
                }
                return null;
            }));
        }
        return chain.thenApply(v -> {
            RepairReport report = new RepairReport(rounds, failed,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), state().trees());
            if (!report.isComplete()) {
                log.warn("anti-entropy run ({}) could not reach {}; {}", why, report.failures(), report);
            } else if (report.recordsSent() + report.recordsReceived() > 0) {
                log.info("anti-entropy run ({}) repaired: {}", why, report);
            } else {
                log.debug("anti-entropy run ({}): replicas agree; {}", why, report);
            }
            return report;
        });
    }

    private CompletableFuture<RoundStats> roundWith(AntiEntropyPeer peer) {
        RepairScope scope = new RepairScope(placement, replicationFactor, selfId, peer.nodeId());
        AntiEntropyInitiator round = new AntiEntropyInitiator(peer.nodeId(), scope, fanoutBits, depth, storage,
                recordFlow, executor, executor, idleTimeout);
        if (!track(round)) {
            return CompletableFuture.failedFuture(new RepairException(Reason.CANCELLED, "the node is shutting down"));
        }
        ledger.roundStarting(round.roundStart()); // before the round builds its tree (see RepairLedger)
        peer.open(round);
        return round.result().thenApply(stats -> {
            ledger.roundCompleted(peer.nodeId(), scope, round.roundStart());
            return stats;
        });
    }

    @Override
    public AntiEntropyResponder openResponder(String initiator, Open open) {
        if (initiator.equals(selfId) || topology.member(initiator) == null) {
            throw new RepairException(Reason.REFUSED, "'" + initiator + "' is not a peer of " + selfId);
        }
        if (open.replicationFactor() < 1 || open.replicationFactor() > topology.size()) {
            throw new RepairException(Reason.REFUSED, "replication factor " + open.replicationFactor()
                    + " not in 1.." + topology.size());
        }
        if (!MerkleTree.isValidShape(open.fanoutBits(), open.depth())) {
            throw new RepairException(Reason.REFUSED, "unsupported tree shape " + open.fanoutBits() + "/" + open.depth());
        }
        if (!servedPermits.tryAcquire()) {
            throw new RepairException(Reason.OVERLOADED, selfId + " already serves as many rounds as it may");
        }
        AntiEntropyResponder responder = new AntiEntropyResponder(initiator,
                new RepairScope(placement, open.replicationFactor(), selfId, initiator), open.fanoutBits(),
                open.depth(), storage, recordFlow, executor, executor, idleTimeout);
        responder.result().whenComplete((stats, error) -> servedPermits.release());
        if (!track(responder)) {
            responder.cancel("the node is shutting down");
        }
        return responder;
    }

    /** The outcomes a round may end with, as {@code kvorum_anti_entropy_rounds_total} labels them. */
    public static List<String> roundOutcomes() {
        List<String> outcomes = new ArrayList<>(List.of(NodeMetrics.ROUND_OK));
        for (Reason r : Reason.values()) {
            outcomes.add(r.name().toLowerCase(Locale.ROOT));
        }
        return outcomes;
    }

    private static String outcomeOf(Throwable error) {
        return error == null ? NodeMetrics.ROUND_OK : RepairException.of(error).reason().name().toLowerCase(Locale.ROOT);
    }

    /** Remembers a session until it ends, so that {@link #close} can cancel it; false once closed. */
    private boolean track(AntiEntropySession session) {
        synchronized (this) {
            if (closed) {
                return false;
            }
            sessions.add(session);
        }
        session.result().whenComplete((stats, error) -> sessions.remove(session));
        return true;
    }

    /** The state of the trees and the last round with each peer. */
    public AntiEntropyState state() {
        RepairStorage.TreeState trees = storage.treeState();
        String treeState = trees == null ? "none" : trees.ready() ? "ready" : "building";
        return new AntiEntropyState(treeState, trees == null ? 0 : trees.lastRefreshMillis(), new TreeMap<>(lastRounds));
    }

    /** Stops the periodic runs and cancels the rounds in progress, initiated or served. Idempotent. */
    @Override
    public void close() {
        ScheduledFuture<?> tick;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            tick = nextTick;
        }
        if (tick != null) {
            tick.cancel(false);
        }
        sessions.forEach(s -> s.cancel("the node is shutting down"));
        try {
            storage.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
