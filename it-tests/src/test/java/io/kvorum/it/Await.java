package io.kvorum.it;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Bounded polling: tests wait for a condition, never for a fixed time. A condition that does not
 * hold within its bound fails with a message that says what was awaited.
 */
final class Await {

    private static final long POLL_MILLIS = 50;

    private Await() {
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @param details appended to the failure message; evaluated only on failure
     * @throws AssertionError when the bound passes first
     */
    static void until(String what, Duration bound, BooleanSupplier condition, Supplier<String> details) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline >= 0) {
                String more = details.get();
                throw new AssertionError("timed out after " + bound.toMillis() + " ms waiting for " + what
                        + (more.isEmpty() ? "" : "\n" + more));
            }
            pause(POLL_MILLIS);
        }
    }

    static void until(String what, Duration bound, BooleanSupplier condition) {
        until(what, bound, condition, () -> "");
    }

    /** Sleeps between two polls of a condition (never as a stand-in for one). */
    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while polling", e);
        }
    }
}
