package io.kvorum.node.util;

import com.google.common.util.concurrent.RateLimiter;
import java.util.concurrent.TimeUnit;

/** Rate limiters for the node's background work (anti-entropy, purges, record streaming). */
public final class Pace {

    private Pace() {
    }

    /**
     * A rate limiter that never goes faster than {@code perSecond}, also after being idle. Guava's
     * plain {@code RateLimiter.create(rate)} saves up to a second of unused permits and then hands
     * them out at once, so background work that starts after a quiet minute would run unpaced and
     * take a whole core from client requests for as long; a warming-up limiter charges saved
     * permits at least the steady rate instead (and starts slower).
     */
    public static RateLimiter steady(double perSecond) {
        return RateLimiter.create(perSecond, 1, TimeUnit.SECONDS);
    }
}
