package io.kvorum.node.liveness;

import io.kvorum.node.time.Clock;
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
 * ({@link GuardedReplica}); it decides nothing by itself and owns no thread.
 *
 * <p>Transitions, per peer:
 * <ul>
 *   <li>any answer ({@link #answered}) makes it UP;</li>
 *   <li>a connection that failed ({@link #unreachable}) makes it DOWN at once;</li>
 *   <li>a heartbeat with no answer in time ({@link #missed}) makes an UNKNOWN peer DOWN at once,
 *       and an UP peer DOWN after {@code missesToDown} in a row: a peer that is merely slow for a
 *       moment is not cut off by one late answer.</li>
 * </ul>
 * Requests to a DOWN peer fail fast; an UP or UNKNOWN peer is tried (docs/operations.md#how-replicas-converge "Liveness").
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

    /** Told of every change between UP and DOWN. */
    public interface Listener {
        void peerUp(String peer);

        default void peerDown(String peer) {
        }
    }

    private final Clock clock;
    private final int missesToDown;
    private final Map<String, Peer> peers = new ConcurrentSkipListMap<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    /**
     * @param peers        the other members' ids; reports about any other id are ignored
     * @param missesToDown heartbeats missed in a row that make an UP peer DOWN (at least 1)
     */
    public PeerLiveness(Collection<String> peers, Clock clock, int missesToDown) {
        if (missesToDown < 1) {
            throw new IllegalArgumentException("missesToDown must be at least 1");
        }
        this.clock = clock;
        this.missesToDown = missesToDown;
        long now = clock.currentTimeMillis();
        peers.forEach(p -> this.peers.put(p, new Peer(now)));
    }

    /** Starts tracking a member that joined; its state is unknown until its first heartbeat. */
    public void addPeer(String peer) {
        peers.putIfAbsent(peer, new Peer(clock.currentTimeMillis()));
    }

    /** Stops tracking a member that left. */
    public void removePeer(String peer) {
        peers.remove(peer);
    }

    public void addListener(Listener listener) {
        listeners.add(listener);
    }

    /**
     * The peer answered something (a heartbeat, a request, even a refusal for overload).
     *
     * @param rttNanos the heartbeat's round trip, or a negative number when not measured
     */
    public void answered(String peer, long rttNanos) {
        Peer p = peers.get(peer);
        if (p == null) {
            return;
        }
        if (rttNanos >= 0) {
            p.rttMicros = TimeUnit.NANOSECONDS.toMicros(rttNanos);
        }
        if (p.state == State.UP && p.misses == 0) {
            return; // the common case, without the lock
        }
        State before;
        synchronized (p) {
            p.misses = 0;
            before = p.state;
            if (before == State.UP) {
                return;
            }
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
            p.misses = 0;
            if (p.state == State.DOWN) {
                return;
            }
            p.enter(State.DOWN, clock.currentTimeMillis());
        }
        markedDown(peer, "it could not be reached");
    }

    /** A heartbeat got no answer within its deadline. */
    public void missed(String peer) {
        Peer p = peers.get(peer);
        if (p == null) {
            return;
        }
        int misses;
        synchronized (p) {
            if (p.state == State.DOWN) {
                return;
            }
            misses = ++p.misses;
            if (p.state == State.UP && misses < missesToDown) {
                return;
            }
            p.misses = 0;
            p.enter(State.DOWN, clock.currentTimeMillis());
        }
        markedDown(peer, misses + " heartbeat(s) in a row got no answer");
    }

    private void markedDown(String peer, String why) {
        log.warn("peer {} is down: {}", peer, why);
        listeners.forEach(l -> l.peerDown(peer));
    }

    /** Whether requests to the peer should fail at once. False for ids that are not peers. */
    public boolean isDown(String peer) {
        Peer p = peers.get(peer);
        return p != null && p.state == State.DOWN;
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
        volatile int misses;
        long sinceMillis; // guarded by this

        Peer(long nowMillis) {
            this.sinceMillis = nowMillis;
        }

        void enter(State next, long nowMillis) {
            state = next;
            sinceMillis = nowMillis;
        }
    }
}
