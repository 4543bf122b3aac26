package io.kvorum.node.time;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A hybrid logical clock (Kulkarni et al., 2014) packed into one {@code long}: the upper 48 bits
 * are physical epoch milliseconds, the lower 16 bits a logical counter. Timestamps compare as
 * plain longs.
 *
 * <p>Contract: every value returned by {@link #now()} is strictly greater than every value this
 * clock returned before and every value passed to {@link #observe(long)} before. That is what lets
 * a client issue two writes back to back, through nodes that saw each other's timestamps, without
 * sleeping between them. Thread-safe and lock-free.
 */
public final class HybridLogicalClock {

    static final int LOGICAL_BITS = 16;
    private static final long LOGICAL_MASK = (1L << LOGICAL_BITS) - 1;

    private final Clock clock;
    /** The physical time {@link #now()} stamps with: {@link #clock}, or a guard over it. */
    private final Clock stampClock;
    private final AtomicLong last = new AtomicLong();
    /** How far ahead of the wall clock a timestamp from another node may be and be adopted; 0: any. */
    private final long maxAheadMillis;
    /** Peers' timestamps not adopted for being beyond the bound ({@link #observeFromPeer}). */
    private final AtomicLong refusedFromPeers = new AtomicLong();
    /** The physical part of the store's ceiling at start ({@link #startPast}); 0 before. */
    private volatile long floorMillis;

    /** A clock that adopts any timestamp it is shown. */
    public HybridLogicalClock(Clock clock) {
        this(clock, Duration.ZERO);
    }

    /**
     * @param maxAhead how far ahead of this node's wall clock a timestamp from another node may be
     *                 and still be adopted ({@code --max-clock-offset}, docs/operations.md#clocks);
     *                 zero adopts any
     */
    public HybridLogicalClock(Clock clock, Duration maxAhead) {
        this(clock, clock, maxAhead);
    }

    private HybridLogicalClock(Clock clock, Clock stampClock, Duration maxAhead) {
        this.clock = clock;
        this.stampClock = stampClock;
        this.maxAheadMillis = maxAhead.toMillis();
    }

    /**
     * The node's clock: as {@link #HybridLogicalClock(Clock, Duration)}, but it stamps through a
     * {@link StepGuardedClock}, so a forward step of the wall clock is not stamped at once; the
     * bounds still count from the wall clock itself.
     */
    public static HybridLogicalClock guardedAgainstSteps(Clock clock, Duration maxAhead) {
        return new HybridLogicalClock(clock, new StepGuardedClock(clock), maxAhead);
    }

    /** A new timestamp, greater than any this clock has issued or observed. */
    public long now() {
        long physical = pack(stampClock.currentTimeMillis(), 0);
        // If the wall clock is ahead of everything seen, take it; otherwise count past the last.
        // A logical overflow carries into the millisecond field, which is harmless: the result
        // still compares greater, and the wall clock catches up within a millisecond.
        return last.accumulateAndGet(physical, (prev, phys) -> Math.max(prev + 1, phys));
    }

    /**
     * Moves this clock past a timestamp, whatever it is: one of this node's own. Timestamps from
     * other nodes go through {@link #observeFromPeer}.
     */
    public void observe(long timestamp) {
        last.accumulateAndGet(timestamp, Math::max);
    }

    /**
     * Starts this clock past the highest timestamp the node's store holds, and counts the bound
     * from there too until the wall clock passes it: after every node's wall clock was set back
     * across a restart, their timestamps still run where they left off, and they go on taking
     * each other's (docs/operations.md#clocks). The floor never moves after start, so no peer can
     * ratchet it forward.
     */
    public void startPast(long storedCeiling) {
        observe(storedCeiling);
        floorMillis = physicalMillis(storedCeiling);
    }

    /**
     * Moves this clock past a timestamp received from another node (a write or a read answer),
     * unless it is further ahead of this node's wall clock than the bound: one far-future timestamp
     * must not drag every clock of the cluster forward. Returns whether it was adopted.
     */
    public boolean observeFromPeer(long remoteTimestamp) {
        if (isBeyondBound(aheadOfWallClockMillis(remoteTimestamp))) {
            refusedFromPeers.incrementAndGet();
            return false;
        }
        observe(remoteTimestamp);
        return true;
    }

    /** How many timestamps from peers this clock has not adopted since start, for being beyond the bound. */
    public long refusedFromPeers() {
        return refusedFromPeers.get();
    }

    /** How many milliseconds the last timestamp this clock issued or adopted is ahead of the reference ({@link #aheadOfWallClockMillis}). */
    public long leadMillis() {
        return aheadOfWallClockMillis(last.get());
    }

    /** Whether {@code aheadMillis} is further ahead than a peer's timestamp may be to be adopted. */
    public boolean isBeyondBound(long aheadMillis) {
        return maxAheadMillis > 0 && aheadMillis > maxAheadMillis;
    }

    /**
     * How many milliseconds {@code timestamp} is ahead of this node's wall clock, or of the highest
     * timestamp its store held at start when the wall clock is behind that ({@link #startPast});
     * negative: behind.
     */
    public long aheadOfWallClockMillis(long timestamp) {
        return physicalMillis(timestamp) - Math.max(clock.currentTimeMillis(), floorMillis);
    }

    public static long pack(long physicalMillis, int logical) {
        return (physicalMillis << LOGICAL_BITS) | (logical & LOGICAL_MASK);
    }

    public static long physicalMillis(long timestamp) {
        return timestamp >>> LOGICAL_BITS;
    }

    public static int logical(long timestamp) {
        return (int) (timestamp & LOGICAL_MASK);
    }
}
