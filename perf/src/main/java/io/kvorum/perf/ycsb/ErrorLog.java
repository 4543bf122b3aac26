package io.kvorum.perf.ycsb;

import java.lang.System.Logger.Level;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Logs failed operations without flooding: the first failure of each kind (operation and
 * reason class, e.g. {@code update: HTTP 504}) is logged at once with its full reason, and later
 * ones of that kind at most once per interval, with how many were not logged in between. Under
 * overload a benchmark fails thousands of requests a second; the counts are in YCSB's report,
 * the log only has to say why.
 */
final class ErrorLog {

    private static final System.Logger log = System.getLogger(KvorumDB.class.getName());

    private final long intervalNanos;
    private final LongSupplier nanoClock;
    private final ConcurrentMap<String, Kind> kinds = new ConcurrentHashMap<>();

    ErrorLog(long intervalNanos, LongSupplier nanoClock) {
        this.intervalNanos = intervalNanos;
        this.nanoClock = nanoClock;
    }

    /**
     * Records one failure; returns the line it logged, or null when it was suppressed.
     *
     * @param kind   what failed and the class of reason, the key of the rate limit
     * @param reason the full reason, logged when this failure is not suppressed
     */
    String failed(String kind, String reason) {
        Kind k = kinds.computeIfAbsent(kind, x -> new Kind());
        long now = nanoClock.getAsLong();
        long suppressed;
        synchronized (k) {
            if (k.lastLogged != Long.MIN_VALUE && now - k.lastLogged < intervalNanos) {
                k.suppressed.incrementAndGet();
                return null;
            }
            k.lastLogged = now;
            suppressed = k.suppressed.getAndSet(0);
        }
        String line = "kvorum: " + kind + " failed: " + reason
                + (suppressed > 0 ? " (and " + suppressed + " more like it not logged)" : "");
        log.log(Level.WARNING, line);
        return line;
    }

    private static final class Kind {
        long lastLogged = Long.MIN_VALUE;
        final AtomicLong suppressed = new AtomicLong();
    }
}
