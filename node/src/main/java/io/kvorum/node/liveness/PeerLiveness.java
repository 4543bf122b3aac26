package io.kvorum.node.liveness;

import io.kvorum.node.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this node knows of each peer: {@link State#UP}, {@link State#DOWN} since when, or
 * {@link State#UNKNOWN} (not heard from since this node started), and the last measured round
 * trip. The state machine is fed by {@link Heartbeats} and by the outcome of requests
 * ({@link GuardedReplica}, {@link ObservedRangeSource}, {@link ObservedAntiEntropyPeer}); it
 * decides nothing by itself and owns no thread.
 *
 * <p>Transitions, per peer:
 * <ul>
 *   <li>any answer ({@link #answered}, {@link #heartbeatAnswered}) makes it UP: a peer that answers
 *       data requests is alive, however late its heartbeats are;</li>
 *   <li>a connection that failed ({@link #unreachable}) makes it DOWN at once, and requests to it
 *       fail at once ({@link #failsFast}) until it answers again;</li>
 *   <li>an UP peer becomes DOWN as <em>suspected</em> when its phi ({@link PhiAccrualDetector}: how
 *       unlikely the silence since its last answer is, given the intervals between its heartbeat
 *       answers so far) reaches the threshold, checked at each heartbeat with no answer in time
 *       ({@link #missed}) and at each {@link #checkSuspicions}. A suspected peer is still sent
 *       requests, with their normal deadline: its answer makes it UP again, and a request that
 *       needs it to make its quorum is not failed on a guess;</li>
 *   <li>an UNKNOWN peer whose heartbeat got no answer in time is suspected at once.</li>
 * </ul>
 * See docs/operations.md#how-peers-notice-each-other.
 *
 * <p>Thread-safe. Listeners run on the thread that caused the change, after it, outside any lock;
 * they must be short and must not block.
 */
public final class PeerLiveness {

    private static final Logger log = LoggerFactory.getLogger(PeerLiveness.class);

    public enum State {
        UNKNOWN, UP, DOWN;

        /** The name in {@code /v0/status}. */
        public String jsonName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * One peer as this node sees it.
     *
     * @param sinceMillis when it entered {@code state}, epoch ms (for UNKNOWN: this node's start)
     * @param rttMicros   the last measured heartbeat round trip, or -1 when none was measured yet
     */
    public record PeerStatus(State state, long sinceMillis, long rttMicros) {
    }

    /**
     * How a silent peer comes to be suspected.
     *
     * @param phiThreshold      phi at which an UP peer is suspected ({@code --phi-convict-threshold})
     * @param heartbeatInterval how often peers are pinged: the detector's first guess of the interval
     * @param acceptablePause   added to the mean interval: one lost heartbeat is not suspicious
     * @param minStdDeviation   the least deviation the detector assumes of the intervals
     */
    public record Detection(double phiThreshold, Duration heartbeatInterval, Duration acceptablePause,
                            Duration minStdDeviation) {
        public Detection {
            if (!(phiThreshold > 0) || Double.isInfinite(phiThreshold)) {
                throw new IllegalArgumentException("the phi threshold must be positive and finite: " + phiThreshold);
            }
        }

        /** The defaults for a threshold and an interval (tests). */
        public static Detection of(double phiThreshold, Duration heartbeatInterval) {
            return new Detection(phiThreshold, heartbeatInterval, heartbeatInterval, heartbeatInterval.dividedBy(5));
        }
    }

    /** Told of every change between UP and DOWN. */
    public interface Listener {
        void peerUp(String peer);

        /** A connection to the peer failed: requests to it fail at once until it answers again. */
        default void peerDown(String peer) {
        }

        /** The peer is suspected (its silence is too long): requests to it are still sent. */
        default void peerSuspected(String peer) {
        }
    }

    private final Clock clock;
    private final Detection detection;
    private final Map<String, Peer> peers = new ConcurrentSkipListMap<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    /** @param peers the other members' ids; reports about any other id are ignored */
    public PeerLiveness(Collection<String> peers, Clock clock, Detection detection) {
        this.clock = clock;
        this.detection = detection;
        peers.forEach(this::addPeer);
    }

    /** Starts tracking a member that joined; its state is unknown until its first heartbeat. */
    public void addPeer(String peer) {
        peers.putIfAbsent(peer, new Peer(clock.currentTimeMillis(), new PhiAccrualDetector(
                detection.heartbeatInterval(), detection.acceptablePause(), detection.minStdDeviation())));
    }

    /** Stops tracking a member that left. */
    public void removePeer(String peer) {
        peers.remove(peer);
    }

    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    /**
     * The peer answered something: a replica request (also after its deadline), a batch of a
     * range, an anti-entropy round, or a ping that may have waited for a connection.
     *
     * @param rttNanos the heartbeat's round trip, or a negative number when not measured
     */
    public void answered(String peer, long rttNanos) {
        Peer p = peers.get(peer);
        if (p == null) {
            return;
        }
        p.lastAnswerNanos = clock.nanoTime();
        if (rttNanos >= 0) {
            p.rttMicros = TimeUnit.NANOSECONDS.toMicros(rttNanos);
        }
        if (p.state == State.UP) {
            return; // the common case, without the lock
        }
        becameUp(peer, p);
    }

    /**
     * The peer answered a heartbeat (a ping to a peer believed up, over an established connection):
     * the interval since its previous one teaches the detector how regular its answers are.
     */
    public void heartbeatAnswered(String peer, long rttNanos) {
        Peer p = peers.get(peer);
        if (p == null) {
            return;
        }
        answered(peer, rttNanos);
        long now = clock.nanoTime();
        synchronized (p) {
            // Only intervals between two answered heartbeats while up (becoming up and a missed
            // heartbeat forget the last one): an outage is no sample of the peer's rhythm.
            if (p.state == State.UP && p.lastHeartbeatNanos != Long.MIN_VALUE) {
                p.detector.add(now - p.lastHeartbeatNanos);
            }
            p.lastHeartbeatNanos = now;
        }
    }

    private void becameUp(String peer, Peer p) {
        State before;
        synchronized (p) {
            before = p.state;
            if (before == State.UP) {
                return;
            }
            p.unreachable = false;
            p.lastHeartbeatNanos = Long.MIN_VALUE;
            p.enter(State.UP, clock.currentTimeMillis());
        }
        log.info("peer {} is up (was {})", peer, before.jsonName());
        listeners.forEach(l -> l.peerUp(peer));
    }

    /** A connection to the peer failed or could not be made. */
    public void unreachable(String peer) {
        Peer p = peers.get(peer);
        if (p == null) {
            return;
        }
        synchronized (p) {
            if (p.state == State.DOWN && p.unreachable) {
                return;
            }
            p.unreachable = true;
            if (p.state != State.DOWN) { // a suspected peer stays down since it was suspected
                p.enter(State.DOWN, clock.currentTimeMillis());
            }
        }
        log.warn("peer {} is down: it could not be reached", peer);
        listeners.forEach(l -> l.peerDown(peer));
    }

    /** A heartbeat got no answer within its deadline. */
    public void missed(String peer) {
        Peer p = peers.get(peer);
        if (p != null) {
            suspectIfSilent(peer, p, true);
        }
    }

    /** Suspects every UP peer whose phi has reached the threshold; called periodically. */
    public void checkSuspicions() {
        peers.forEach((peer, p) -> {
            if (p.state == State.UP) {
                suspectIfSilent(peer, p, false);
            }
        });
    }

    private void suspectIfSilent(String peer, Peer p, boolean missedHeartbeat) {
        double phi;
        synchronized (p) {
            if (missedHeartbeat) {
                // The next answer's interval would include the lost one: no sample of the rhythm
                // of answers (one lost heartbeat is what the acceptable pause allows for).
                p.lastHeartbeatNanos = Long.MIN_VALUE;
            }
            if (p.state == State.DOWN || (p.state == State.UNKNOWN && !missedHeartbeat)) {
                return;
            }
            phi = p.state == State.UNKNOWN ? Double.POSITIVE_INFINITY : phi(p);
            if (phi < detection.phiThreshold()) {
                return;
            }
            p.enter(State.DOWN, clock.currentTimeMillis());
        }
        long silentMillis = p.lastAnswerNanos == Long.MIN_VALUE ? -1
                : TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - p.lastAnswerNanos);
        log.warn("peer {} is suspected down: {}", peer, silentMillis < 0 ? "its first heartbeat got no answer"
                : String.format(java.util.Locale.ROOT, "no answer for %d ms (phi %.1f, threshold %.1f); requests are still sent to it",
                        silentMillis, phi, detection.phiThreshold()));
        listeners.forEach(l -> l.peerSuspected(peer));
    }

    private double phi(Peer p) {
        long last = p.lastAnswerNanos;
        return last == Long.MIN_VALUE ? Double.POSITIVE_INFINITY : p.detector.phi(clock.nanoTime() - last);
    }

    /**
     * The peer's phi now, for the metrics: how unlikely its silence since its last answer is; NaN
     * when it never answered (or is not a peer).
     */
    public double phi(String peer) {
        Peer p = peers.get(peer);
        if (p == null || p.lastAnswerNanos == Long.MIN_VALUE) {
            return Double.NaN;
        }
        synchronized (p) {
            return phi(p);
        }
    }

    /** Whether the peer is DOWN, suspected or unreachable. False for ids that are not peers. */
    public boolean isDown(String peer) {
        Peer p = peers.get(peer);
        return p != null && p.state == State.DOWN;
    }

    /**
     * Whether requests to the peer should fail at once: a connection to it failed and it has not
     * answered since. A merely suspected peer is still tried. False for ids that are not peers.
     */
    public boolean failsFast(String peer) {
        Peer p = peers.get(peer);
        return p != null && p.state == State.DOWN && p.unreachable;
    }

    /** Whether the peer is up; false for ids that are not peers (any more). */
    public boolean isUp(String peer) {
        Peer p = peers.get(peer);
        return p != null && p.state == State.UP;
    }

    public State state(String peer) {
        Peer p = peers.get(peer);
        if (p == null) {
            throw new IllegalArgumentException("not a peer: " + peer);
        }
        return p.state;
    }

    /** Every peer, by id in ascending order. */
    public Map<String, PeerStatus> snapshot() {
        Map<String, PeerStatus> out = new TreeMap<>();
        peers.forEach((id, p) -> {
            synchronized (p) {
                out.put(id, new PeerStatus(p.state, p.sinceMillis, p.rttMicros));
            }
        });
        return out;
    }

    /** One peer's state: written under its own lock, read without it where a stale read is harmless. */
    private static final class Peer {
        volatile State state = State.UNKNOWN;
        volatile long rttMicros = -1;
        /** When it last answered anything, {@link Clock#nanoTime}; MIN_VALUE before its first answer. */
        volatile long lastAnswerNanos = Long.MIN_VALUE;
        volatile boolean unreachable; // written under this
        long lastHeartbeatNanos = Long.MIN_VALUE; // guarded by this
        long sinceMillis; // guarded by this
        final PhiAccrualDetector detector; // guarded by this

        Peer(long nowMillis, PhiAccrualDetector detector) {
            this.sinceMillis = nowMillis;
            this.detector = detector;
        }

        void enter(State next, long nowMillis) {
            state = next;
            sinceMillis = nowMillis;
        }
    }
}
