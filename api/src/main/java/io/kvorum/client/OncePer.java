package io.kvorum.client;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Says yes to one caller at most once per interval, the first time an interval after construction:
 * for work that a frequent path triggers, such as reading a file again. Thread-safe.
 */
final class OncePer {

    private final long intervalNanos;
    private final AtomicLong next;

    OncePer(long intervalNanos) {
        this.intervalNanos = intervalNanos;
        this.next = new AtomicLong(System.nanoTime() + intervalNanos);
    }

    /** Whether the caller should do the work now (then no other caller will before another interval). */
    boolean due() {
        long now = System.nanoTime();
        long due = next.get();
        return now - due >= 0 && next.compareAndSet(due, now + intervalNanos);
    }
}
