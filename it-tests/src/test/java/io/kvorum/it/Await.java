package io.kvorum.it;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Bounded polling: tests wait for a condition, never for a fixed time. A condition that does not
 * hold within its bound fails with a message that says what was awaited. The polling is Awaitility's.
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
        try {
            await(what).atMost(bound).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(POLL_MILLIS))
                    .pollInSameThread().until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            String more = details.get();
            throw new AssertionError("timed out after " + bound.toMillis() + " ms waiting for " + what
                    + (more.isEmpty() ? "" : "\n" + more), e);
        }
    }

    static void until(String what, Duration bound, BooleanSupplier condition) {
        until(what, bound, condition, () -> "");
    }

    /** Sleeps for a time the scenario chose (how long a fault lasts), never as a stand-in for a condition. */
    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while polling", e);
        }
    }
}
