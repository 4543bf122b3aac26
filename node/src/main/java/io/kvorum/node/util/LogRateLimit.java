package io.kvorum.node.util;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Which log lines to write when a cause repeats: at most one per key and interval. Keys often come
 * from the other side of a connection (a sender's id, a certificate's subject), so their number is
 * bounded: past {@link #MAX_KEYS} keys logged within one interval, every further key shares one
 * slot, and so one line an interval between them. Thread-safe.
 */
public final class LogRateLimit {

    /** How many keys are remembered at once; each costs a map entry. */
    public static final int MAX_KEYS = 1024;
    private static final String OVERFLOW = "\0overflow";

    private final long intervalNanos;
    private final LongSupplier nanoTime;
    /** Guarded by this; in the order the keys were last logged. */
    private final LinkedHashMap<String, Long> lastLogged = new LinkedHashMap<>();

    public LogRateLimit(Duration interval) {
        this(interval, System::nanoTime);
    }

    LogRateLimit(Duration interval, LongSupplier nanoTime) {
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
    }

    /** Whether a line for {@code key} may be written now; if so, the next one waits an interval. */
    public synchronized boolean admit(String key) {
        long now = nanoTime.getAsLong();
        forgetOlderThan(now - intervalNanos);
        String slot = lastLogged.containsKey(key) || lastLogged.size() < MAX_KEYS - 1 ? key : OVERFLOW;
        Long last = lastLogged.get(slot);
        if (last != null && now - last < intervalNanos) {
            return false;
        }
        lastLogged.remove(slot); // re-inserted last: the map stays in the order of logging
        lastLogged.put(slot, now);
        return true;
    }

    /** Drops the keys last logged at or before {@code cutoff}; they come first in the map. */
    private void forgetOlderThan(long cutoff) {
        Iterator<Map.Entry<String, Long>> it = lastLogged.entrySet().iterator();
        while (it.hasNext()) {
            if (it.next().getValue() - cutoff > 0) {
                return;
            }
            it.remove();
        }
    }

    /** How many keys are remembered now (tests). */
    synchronized int size() {
        return lastLogged.size();
    }
}
