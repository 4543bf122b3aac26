package io.kvorum.node.time;

/**
 * The wall clock as a node stamps writes with it: a forward step of the wall clock (set ahead by
 * hand, or by a time source gone wrong) is taken in gradually, never faster than monotonic time
 * passes plus {@value #CATCH_UP_PERCENT}%, so that a node whose clock jumps ahead stamps nothing
 * far ahead of its peers in the second or so before their pings tell it so and it refuses writes
 * (docs/operations.md#clocks). Without the guard, such a node keeps its own copy of the writes
 * its peers refuse, stamped in the future, and that copy wins over later writes of the same keys.
 *
 * <p>A backward step passes through at once (the hybrid logical clock never goes back). While the
 * wall clock runs normally, monotonic time plus the margin always keeps up with it, so this reads
 * the wall clock unchanged. Thread-safe.
 */
public final class StepGuardedClock implements Clock {

    /** How much faster than monotonic time a forward step is taken in: a 1 s step takes 10 s. */
    public static final int CATCH_UP_PERCENT = 10;

    private final Clock wall;
    private boolean started;
    /** The last reading, in nanoseconds since the epoch, and the monotonic time it was taken at. */
    private long lastReadingNanos;
    private long lastMonotonicNanos;

    public StepGuardedClock(Clock wall) {
        this.wall = wall;
    }

    @Override
    public synchronized long currentTimeMillis() {
        long wallNanos = wall.currentTimeMillis() * 1_000_000L;
        long monotonic = wall.nanoTime();
        if (!started) {
            started = true;
            lastReadingNanos = wallNanos;
        } else {
            long elapsed = Math.max(0, monotonic - lastMonotonicNanos);
            long allowed = lastReadingNanos + elapsed + elapsed / 100 * CATCH_UP_PERCENT;
            lastReadingNanos = wallNanos < lastReadingNanos ? wallNanos : Math.min(wallNanos, allowed);
        }
        lastMonotonicNanos = monotonic;
        return lastReadingNanos / 1_000_000L;
    }

    @Override
    public long nanoTime() {
        return wall.nanoTime();
    }
}
