package io.kvorum.node.time;

import java.util.concurrent.atomic.AtomicLong;

/** A {@link Clock} that moves only when a test moves it (Ambry's {@code MockTime}). Thread-safe. */
public class ManualClock implements Clock {

    private final AtomicLong millis;
    private final AtomicLong nanos = new AtomicLong();

    public ManualClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    @Override
    public long currentTimeMillis() {
        return millis.get();
    }

    @Override
    public long nanoTime() {
        return nanos.get();
    }

    /** Sets the wall clock, possibly backwards (as NTP may). */
    public void set(long epochMillis) {
        millis.set(epochMillis);
    }

    /** Moves both the wall clock and the monotonic clock forward. */
    public void advance(long deltaMillis) {
        millis.addAndGet(deltaMillis);
        nanos.addAndGet(deltaMillis * 1_000_000L);
    }
}
