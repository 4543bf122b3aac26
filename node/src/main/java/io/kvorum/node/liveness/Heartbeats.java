package io.kvorum.node.liveness;

import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.liveness.PeerProbe.Kind;
import io.kvorum.node.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keeps {@link PeerLiveness} current without client traffic: every {@code interval} each peer
 * with no ping in flight is pinged ({@link Kind#HEARTBEAT} when it is up, {@link Kind#RECONNECT}
 * otherwise, so that a peer coming back is reached at once, not after its channel's backoff).
 *
 * <p>Start-up: {@link #announce} pings every peer with {@link Kind#ANNOUNCE}; each peer that is
 * up reaches this node back before it answers, so once the announcement has completed, every
 * live peer can serve this node requests and this node can serve theirs. The node starts
 * serving clients only after it (docs/operations.md#how-replicas-converge: a restarted node is served as soon as it answers
 * {@code /v0/status}).
 *
 * <p>Receiving: as the transport's {@link PingListener}, an announcement from a peer is answered
 * by a {@link Kind#RECONNECT} ping back; a heartbeat from a peer this node does not believe up
 * triggers one too.
 *
 * <p>Clocks: every answer carries the peer's wall clock, from which {@link ClockOffsets} measures how
 * far the peer's clock is from this node's; this node's answers carry its own.
 *
 * <p>Suspicion: a heartbeat with no answer in time is reported {@link PeerLiveness#missed}, and
 * {@link PeerLiveness#checkSuspicions} runs four times per interval; whether a silent peer is
 * suspected is {@link PeerLiveness}'s decision (phi accrual), not a count of misses.
 *
 * <p>Threading: ticks run on the given scheduler; ping outcomes are recorded on whatever thread
 * the transport completes them. Lifecycle: {@link #start} once the probes exist; {@link #close}
 * stops the ticks (pings in flight end by their own deadlines).
 */
public final class Heartbeats implements PingListener, AutoCloseable {

    private static final int SUSPICION_CHECKS_PER_INTERVAL = 4;

    private final PeerLiveness liveness;
    private final ClockOffsets clockOffsets;
    private final ScheduledExecutorService scheduler;
    private final Duration interval;
    private final Clock clock;
    private final Incarnations incarnations;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final Map<String, PeerProbe> probes = new ConcurrentHashMap<>();
    private volatile ScheduledFuture<?> ticks;
    private volatile ScheduledFuture<?> suspicionChecks;
    private volatile boolean closed;

    public Heartbeats(PeerLiveness liveness, ClockOffsets clockOffsets, ScheduledExecutorService scheduler,
                      Duration interval, Clock clock) {
        this(liveness, clockOffsets, scheduler, interval, clock, Incarnations.NONE);
    }

    /** @param incarnations told what each ping carried and what each answer said of this node's store */
    public Heartbeats(PeerLiveness liveness, ClockOffsets clockOffsets, ScheduledExecutorService scheduler,
                      Duration interval, Clock clock, Incarnations incarnations) {
        this.incarnations = incarnations;
        this.liveness = liveness;
        this.clockOffsets = clockOffsets;
        this.scheduler = scheduler;
        this.interval = interval;
        this.clock = clock;
    }

    /** Heartbeats go to this peer too, from the next tick on. */
    public void addPeer(PeerProbe probe) {
        probes.put(probe.nodeId(), probe);
    }

    /** No more heartbeats to this peer, a member that left. */
    public void removePeer(String peer) {
        probes.remove(peer);
        clockOffsets.forget(peer);
    }

    /** Adds these peers and starts. */
    public void start(Collection<? extends PeerProbe> peers) {
        peers.forEach(this::addPeer);
        start();
    }

    /**
     * Starts the periodic heartbeats to the peers {@link #addPeer added}. Before this, pings received
     * are answered at once.
     */
    public void start() {
        long ms = interval.toMillis();
        ticks = scheduler.scheduleWithFixedDelay(this::beat, ms, ms, TimeUnit.MILLISECONDS);
        // Suspicion is checked between pings too, so that a silent peer is suspected soon after its
        // phi crosses the threshold rather than at the next ping's deadline.
        long checkMs = Math.max(1, ms / SUSPICION_CHECKS_PER_INTERVAL);
        suspicionChecks = scheduler.scheduleWithFixedDelay(liveness::checkSuspicions, checkMs, checkMs,
                TimeUnit.MILLISECONDS);
    }

    /**
     * Tells every peer this node has started; completes when each has answered or failed (each
     * ping has its own deadline). Never fails.
     */
    public CompletableFuture<Void> announce() {
        return CompletableFuture.allOf(probes.values().stream()
                .map(p -> ping(p, Kind.ANNOUNCE))
                .toArray(CompletableFuture[]::new));
    }

    /**
     * Pings the peer now unless a ping to it is in flight: after a request to it failed, so that a
     * failure is confirmed (or the peer found up again) without waiting for the next tick.
     */
    public void probeSoon(String peer) {
        if (closed || !inFlight.add(peer)) {
            return;
        }
        try {
            scheduler.execute(() -> beat(peer));
        } catch (RejectedExecutionException e) {
            inFlight.remove(peer); // closing
        }
    }

    @Override
    public void pinged(String peer) {
        if (probes.containsKey(peer) && liveness.state(peer) != PeerLiveness.State.UP) {
            probeSoon(peer);
        }
    }

    /**
     * Remembered for any sender the transport let through, a member (its cluster check refuses the
     * others), also before this node has connected to it.
     */
    @Override
    public String incarnationSeen(String peer, String incarnation) {
        return incarnations.seen(peer, incarnation);
    }

    @Override
    public long wallClockMillis() {
        return clock.currentTimeMillis();
    }

    @Override
    public CompletableFuture<Void> announced(String peer) {
        PeerProbe probe = probes.get(peer);
        if (probe == null || closed) {
            return CompletableFuture.completedFuture(null);
        }
        return ping(probe, Kind.RECONNECT);
    }

    private void beat() {
        clockOffsets.recheck();
        for (String peer : probes.keySet()) {
            if (!closed && inFlight.add(peer)) {
                beat(peer);
            }
        }
    }

    /** One ping to a peer that {@link #inFlight} holds for it. */
    private void beat(String peer) {
        PeerProbe probe = probes.get(peer);
        if (probe == null) {
            inFlight.remove(peer); // it left
            return;
        }
        Kind kind = liveness.state(peer) == PeerLiveness.State.UP ? Kind.HEARTBEAT : Kind.RECONNECT;
        ping(probe, kind).whenComplete((ignored, error) -> inFlight.remove(peer));
    }

    /** Pings and records the outcome in {@link #liveness}; the result never fails. */
    private CompletableFuture<Void> ping(PeerProbe probe, Kind kind) {
        long start = clock.nanoTime();
        long sentAtMillis = clock.currentTimeMillis();
        CompletableFuture<PeerProbe.Pong> sent;
        try {
            sent = probe.ping(kind, incarnations.own());
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return sent.handle((pong, error) -> {
            String peer = probe.nodeId();
            if (error == null) {
                long roundTrip = clock.nanoTime() - start;
                // A reconnection's longer round trip only widens the clock reading's uncertainty.
                clockOffsets.measured(peer, sentAtMillis, roundTrip, pong == null ? 0 : pong.wallMillis());
                incarnations.answered(peer, pong == null || pong.remembered() == null ? "" : pong.remembered());
                // Only a plain heartbeat measures the network and the peer's rhythm; the others
                // include a reconnection.
                if (kind == Kind.HEARTBEAT) {
                    liveness.heartbeatAnswered(peer, roundTrip);
                } else {
                    liveness.answered(peer, -1);
                }
            } else if (ReplicaUnavailableException.reasonOf(error) == ReplicaUnavailableException.Reason.TIMED_OUT) {
                liveness.missed(peer);
                incarnations.unanswered(peer);
            } else {
                liveness.unreachable(peer);
                incarnations.unanswered(peer);
            }
            return null;
        });
    }

    @Override
    public void close() {
        closed = true;
        for (ScheduledFuture<?> t : new ScheduledFuture<?>[] {ticks, suspicionChecks}) {
            if (t != null) {
                t.cancel(false);
            }
        }
    }
}
