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

    /**
     * This clock with its wall clock {@code millis} ahead (behind, if negative); its monotonic time
     * is the same. For tests of a node whose clock is off (see {@code Main}).
     */
    default Clock shiftedBy(long millis) {
        Clock base = this;
        return new Clock() {
            @Override
            public long currentTimeMillis() {
                return base.currentTimeMillis() + millis;
            }

            @Override
            public long nanoTime() {
                return base.nanoTime();
            }
        };
    }

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
