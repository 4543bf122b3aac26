package io.kvorum.node.time;

/**
 * The node's only source of time, so tests can drive the hybrid logical clock, TTL expiry and
 * request deadlines by hand.
 */
public interface Clock {

    /** Wall-clock time in epoch milliseconds. Used for HLC physical time and TTL expiry. */
    long currentTimeMillis();

    /** Monotonic time in nanoseconds, for deadlines and durations only. */
    long nanoTime();

    Clock SYSTEM = new Clock() {
        @Override
        public long currentTimeMillis() {
            return System.currentTimeMillis();
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }
    };
}
