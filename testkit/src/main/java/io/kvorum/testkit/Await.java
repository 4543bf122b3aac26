package io.kvorum.testkit;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The one bounded wait of the tests: a test waits for a condition, never for a fixed time. A
 * condition that does not hold within its bound fails with an {@link AssertionError} that says what
 * was awaited. The polling is Awaitility's, on the caller's thread; a condition that throws fails
 * the wait at once.
 */
public final class Await {

    /** Between two polls: short, but it leaves the shared cores to what is awaited. */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(20);

    private Await() {
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @param what names what is awaited in the failure message
     * @param details appended to the failure message (e.g. a child process's log); read only on failure
     * @throws AssertionError when {@code bound} passes first
     */
    public static void until(String what, Duration bound, BooleanSupplier condition, Supplier<String> details) {
        try {
            await(what).atMost(bound).pollDelay(Duration.ZERO).pollInterval(POLL_INTERVAL).pollInSameThread()
                    .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            String more = details.get();
            throw new AssertionError("timed out after " + bound.toMillis() + " ms waiting for " + what
                    + (more.isEmpty() ? "" : "\n" + more), e);
        }
    }

    /** Polls {@code condition} until it holds; fails after {@code bound}. */
    public static void until(String what, Duration bound, BooleanSupplier condition) {
        until(what, bound, condition, () -> "");
    }

    /**
     * Polls {@code probe} until what it returns satisfies {@code done}, and returns that.
     *
     * @throws AssertionError when {@code bound} passes first; the message shows the last value seen
     */
    public static <T> T untilValue(String what, Duration bound, Supplier<T> probe, Predicate<? super T> done) {
        AtomicReference<T> last = new AtomicReference<>();
        until(what, bound, () -> {
            T value = probe.get();
            last.set(value);
            return done.test(value);
        }, () -> "last seen: " + last.get());
        return last.get();
    }

    /** Sleeps for a time the test chose (how long a fault lasts, a backoff), never as a stand-in for a condition. */
    public static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while pausing", e);
        }
    }
}
