package io.kvorum.node.liveness;

import io.kvorum.node.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How far each peer's wall clock is from this node's, as heartbeats measure it, and whether this
 * node's own clock is too far off for it to stamp writes.
 *
 * <p>Why it matters: writes are ordered by last-write-wins on timestamps that the coordinator takes
 * from its hybrid logical clock (docs/operations.md#how-replicas-converge), whose physical part is the wall clock. A coordinator
 * whose clock is seconds behind stamps a write older than writes made before it through other
 * nodes, and it loses to them silently; one whose clock is ahead stamps writes that later writes
 * through the other nodes cannot overwrite, and drags every clock that sees them ahead too.
 *
 * <p>Measuring (Cristian's algorithm): the answer to a ping carries the peer's wall clock as it
 * answered, which happened somewhere within the round trip. So the peer's clock minus this node's
 * clock at the middle of the round trip is the offset, give or take half the round trip, plus a
 * millisecond for the clocks' resolution. A slow answer (a pause, a busy peer) widens that
 * uncertainty instead of faking an offset.
 *
 * <p>Deciding: a peer is <em>off</em> when its offset is beyond {@code maxOffset} even at the
 * near end of its uncertainty. This node refuses writes ({@link #writeRefusal}) when the peers that
 * are off outnumber those that are not and this node together: its clock then disagrees with most
 * of the nodes measured, so it is its clock that is wrong. A tie
 * refuses nothing: in a cluster of two neither node can tell whose clock is wrong, and both go on,
 * with a warning. Readings older than {@code staleAfter} (a peer that stopped answering) count for
 * nothing. {@code maxOffset} zero measures and reports offsets but judges none.
 *
 * <p>Thread-safe. The decision is made again when a reading arrives or a member leaves, and on
 * {@link #recheck} (every heartbeat tick, so that a refusal resting on readings gone stale ends
 * without new ones); each change is pushed to the listener ({@link #onRefusalChange}), so that the
 * path of a write reads one field.
 */
public final class ClockOffsets {

    private static final Logger log = LoggerFactory.getLogger(ClockOffsets.class);

    /**
     * One peer's offset as last measured.
     *
     * @param millis            the peer's wall clock minus this node's
     * @param uncertaintyMillis how far the true offset may be from {@code millis}, either way
     * @param atNanos           when it was measured, on this node's monotonic clock
     */
    public record Offset(long millis, long uncertaintyMillis, long atNanos) {

        /** Whether the offset is beyond {@code max} whatever its uncertainty. */
        boolean certainlyBeyond(long max) {
            return Math.abs(millis) - uncertaintyMillis > max;
        }
    }

    private final Clock clock;
    private final long maxOffsetMillis;
    private final long staleAfterNanos;
    private final Map<String, Offset> offsets = new ConcurrentHashMap<>();
    /** The peers last found off, for logging each change once. */
    private final Map<String, Boolean> off = new ConcurrentHashMap<>();
    /** Why writes are refused, or null while they are accepted. */
    private volatile String refusal;
    private volatile Consumer<String> listener = refusal -> { };

    /**
     * @param maxOffset  the largest offset from most peers with which this node still stamps writes
     *                   ({@code --max-clock-offset}); zero judges nothing
     * @param staleAfter how long a reading counts
     */
    public ClockOffsets(Clock clock, Duration maxOffset, Duration staleAfter) {
        this.clock = clock;
        this.maxOffsetMillis = maxOffset.toMillis();
        this.staleAfterNanos = staleAfter.toNanos();
    }

    /**
     * A ping to {@code peer} sent at {@code sentAtMillis} (this node's wall clock) came back after
     * {@code roundTripNanos} carrying the peer's wall clock {@code peerMillis} (0: not told).
     */
    public void measured(String peer, long sentAtMillis, long roundTripNanos, long peerMillis) {
        if (peerMillis <= 0 || roundTripNanos < 0) {
            return;
        }
        long halfTripMillis = (TimeUnit.NANOSECONDS.toMillis(roundTripNanos) + 1) / 2;
        Offset o = new Offset(peerMillis - (sentAtMillis + halfTripMillis), halfTripMillis + 1, clock.nanoTime());
        offsets.put(peer, o);
        if (maxOffsetMillis > 0) {
            judgePeer(peer, o);
            decide();
        }
    }

    /** Forgets a member that left. */
    public void forget(String peer) {
        offsets.remove(peer);
        off.remove(peer);
        if (maxOffsetMillis > 0) {
            decide();
        }
    }

    /** The peer's last offset, if one was measured within {@code staleAfter}; else null. */
    public Offset offset(String peer) {
        Offset o = offsets.get(peer);
        return o != null && isFresh(o, clock.nanoTime()) ? o : null;
    }

    /**
     * Null while this node may stamp writes; otherwise why it may not, in one line for the client
     * (the peers measured and their offsets).
     */
    public String writeRefusal() {
        return refusal;
    }

    /**
     * Tells {@code onChange} the {@link #writeRefusal} now, and then each time it changes (null:
     * writes are accepted again; while refusing, new figures are a change), on the thread that
     * changed it. It must be short.
     */
    public void onRefusalChange(Consumer<String> onChange) {
        synchronized (this) {
            listener = onChange;
            onChange.accept(refusal);
        }
    }

    /** Decides again without a new reading: a refusal resting on readings gone stale ends. */
    public void recheck() {
        if (maxOffsetMillis > 0 && refusal != null) {
            decide();
        }
    }

    /**
     * Whether a peer measured within {@code staleAfter} finds this node's clock ahead of its own by
     * more than {@code --max-clock-offset}, whatever the uncertainty. A tie refuses no writes, but
     * this node may be the one running ahead, so it deletes no expired value meanwhile
     * (docs/operations.md#expiry-and-tombstones). False when the bound is zero.
     */
    public boolean isAheadOfAPeer() {
        if (maxOffsetMillis <= 0) {
            return false;
        }
        long nowNanos = clock.nanoTime();
        for (Offset o : offsets.values()) {
            if (o.millis < 0 && isFresh(o, nowNanos) && o.certainlyBeyond(maxOffsetMillis)) {
                return true;
            }
        }
        return false;
    }

    private boolean isFresh(Offset o, long nowNanos) {
        return nowNanos - o.atNanos <= staleAfterNanos;
    }

    private void judgePeer(String peer, Offset o) {
        boolean beyond = o.certainlyBeyond(maxOffsetMillis);
        Boolean before = off.put(peer, beyond);
        if (before == null ? beyond : before != beyond) {
            if (beyond) {
                log.warn("the clock of {} is {} ms {} this node's (±{} ms): more than --max-clock-offset {} ms",
                        peer, Math.abs(o.millis), o.millis > 0 ? "ahead of" : "behind", o.uncertaintyMillis,
                        maxOffsetMillis);
            } else {
                log.info("the clock of {} is within --max-clock-offset of this node's again ({} ms, ±{} ms)",
                        peer, o.millis, o.uncertaintyMillis);
            }
        }
    }

    private synchronized void decide() {
        long nowNanos = clock.nanoTime();
        List<String> beyond = new ArrayList<>();
        int within = 1; // this node agrees with itself
        for (Map.Entry<String, Offset> e : new TreeMap<>(offsets).entrySet()) {
            Offset o = e.getValue();
            if (!isFresh(o, nowNanos)) {
                continue;
            }
            if (o.certainlyBeyond(maxOffsetMillis)) {
                beyond.add(e.getKey() + " " + signed(o.millis) + " ms");
            } else {
                within++;
            }
        }
        String next = beyond.size() > within
                ? "this node's clock is off from its peers' by more than --max-clock-offset " + maxOffsetMillis
                        + " ms (each peer's clock minus this node's: " + String.join(", ", beyond)
                        + "), so writes through it would be misordered; write through another node, and fix this"
                        + " node's time synchronisation"
                : null;
        String before = refusal;
        refusal = next;
        if (before == null && next != null) {
            log.error("refusing writes (503): {}", next);
        } else if (before != null && next == null) {
            log.info("accepting writes again: this node's clock agrees with most of its peers' within "
                    + "--max-clock-offset {} ms", maxOffsetMillis);
        }
        if (!Objects.equals(before, next)) {
            listener.accept(next);
        }
    }

    private static String signed(long millis) {
        return millis > 0 ? "+" + millis : Long.toString(millis);
    }
}
