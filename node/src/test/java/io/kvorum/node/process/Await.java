package io.kvorum.node.process;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Bounded polling: the tests wait for a condition, never for a fixed time. A condition that does
 * not hold within its bound fails the test with a message that says what was awaited.
 */
final class Await {

    private static final Duration POLL_INTERVAL = Duration.ofMillis(20);

    private Await() {
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @param details appended to the failure message (e.g. a child process's logs); read only on failure
     * @throws AssertionError when the bound passes first
     */
    static void until(String what, Duration bound, BooleanSupplier condition, Supplier<String> details) {
        try {
            await(what).atMost(bound).pollDelay(Duration.ZERO).pollInterval(POLL_INTERVAL).pollInSameThread()
                    .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("timed out after " + bound.toMillis() + " ms waiting for " + what
                    + "\n" + details.get(), e);
        }
    }

    static void until(String what, Duration bound, BooleanSupplier condition) {
        until(what, bound, condition, () -> "");
    }
}
