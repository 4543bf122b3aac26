package io.kvorum.node.util;

import com.google.common.util.concurrent.RateLimiter;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * A rate limit for the node's background work (anti-entropy, purges, record streaming), taken a
 * record or a byte at a time.
 *
 * <p>It never goes faster than its rate, also after being idle: Guava's plain
 * {@code RateLimiter.create(rate)} saves up to a second of unused permits and then hands them out
 * at once, so background work that starts after a quiet minute would run unpaced and take a whole
 * core from client requests for as long; a warming-up limiter charges saved permits at least the
 * steady rate instead (and starts slower).
 *
 * <p>Nor much slower: permits are owed until {@link #SLEEP_MILLIS} ms' worth have added up, then
 * paid for in one wait. Paid for one at a time, each wait is a sleep of a few tens of microseconds
 * that the operating system stretches to about half a millisecond: 20,000 records a second ran at
 * 1,857 a second, and a node joining a cluster took ten times as long as its pace said.
 *
 * <p>Thread-safe.
 */
public final class Pace {

    /** The least wait: the permits owed are paid for once they are worth this long at the rate. */
    static final int SLEEP_MILLIS = 10;

    private final IntConsumer pay;
    private final long chunk;
    private long owed; // guarded by this

    /** @param pay waits for that many permits at {@code perSecond} */
    Pace(double perSecond, IntConsumer pay) {
        this.pay = pay;
        this.chunk = Math.max(1, (long) (perSecond * SLEEP_MILLIS / 1000));
    }

    /** A pace of {@code perSecond} permits. */
    public static Pace steady(double perSecond) {
        RateLimiter limiter = RateLimiter.create(perSecond, 1, TimeUnit.SECONDS);
        return new Pace(perSecond, limiter::acquire);
    }

    /** Takes one permit, waiting if the permits owed are worth a wait. */
    public void acquire() {
        acquire(1);
    }

    /** Takes {@code permits}, waiting if the permits owed, these included, are worth a wait. */
    public void acquire(long permits) {
        long due;
        synchronized (this) {
            owed += permits;
            if (owed < chunk) {
                return;
            }
            due = owed;
            owed = 0;
        }
        while (due > 0) {
            int now = (int) Math.min(due, Integer.MAX_VALUE);
            pay.accept(now);
            due -= now;
        }
    }
}
