package io.kvorum.node.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class PaceTest {

    /**
     * After a quiet spell, background reads do not catch up at once: a limiter that saved its
     * unused permits would let this second's worth through without waiting.
     */
    @Test
    void aPaceIsNeverExceededAfterBeingIdle() throws Exception {
        var pace = Pace.steady(1000);
        pace.acquire(1);
        Thread.sleep(1500); // idle: the situation under test, not a wait for a condition
        long start = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            pace.acquire(100);
        }
        double seconds = (System.nanoTime() - start) / 1e9;

        // The last acquire's 100 permits are charged to the next caller, so 900 were waited for.
        assertThat(seconds).as("1,000 permits at 1,000/s after being idle").isGreaterThanOrEqualTo(0.9 * 0.95);
    }
}
