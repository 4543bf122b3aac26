package io.kvorum.node.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class PaceTest {

    /**
     * Permits taken one at a time are paid for together, 10 ms' worth at once: a wait per permit
     * is a sleep the operating system stretches, and 20,000 a second ran at under 2,000.
     */
    @Test
    void permitsTakenOneAtATimeArePaidForTenMillisecondsWorthAtOnce() {
        List<Integer> paid = new ArrayList<>();
        Pace pace = new Pace(20_000, paid::add);
        for (int i = 0; i < 1_000; i++) {
            pace.acquire();
        }
        assertThat(paid).containsExactly(200, 200, 200, 200, 200);

        pace.acquire(150);
        pace.acquire(5_000); // more than a chunk at once: paid at once, with what was owed
        assertThat(paid).endsWith(5_150);
        Pace slow = new Pace(10, paid::add); // under one permit per 10 ms: every permit is paid for
        slow.acquire();
        assertThat(paid).endsWith(5_150, 1);
    }

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
