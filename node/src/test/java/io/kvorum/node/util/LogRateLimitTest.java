package io.kvorum.node.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogRateLimitTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final LogRateLimit limit = new LogRateLimit(Duration.ofNanos(100), now::get);

    @Test
    void oneLinePerKeyAndInterval() {
        assertThat(limit.admit("a")).isTrue();
        assertThat(limit.admit("a")).isFalse();
        assertThat(limit.admit("b")).as("another key has its own interval").isTrue();
        now.addAndGet(99);
        assertThat(limit.admit("a")).isFalse();
        now.addAndGet(1);
        assertThat(limit.admit("a")).isTrue();
    }

    @Test
    void keysChosenByTheOtherSideShareOneSlotPastTheBoundAndAreForgottenAfterAnInterval() {
        for (int i = 0; i < 10 * LogRateLimit.MAX_KEYS; i++) {
            limit.admit("sender-" + i);
        }
        assertThat(limit.size()).isLessThanOrEqualTo(LogRateLimit.MAX_KEYS);
        assertThat(limit.admit("one-more")).as("past the bound, new keys share the slot logged already").isFalse();

        now.addAndGet(100);
        assertThat(limit.admit("one-more")).as("an interval later").isTrue();
        assertThat(limit.size()).as("the keys of the interval before are forgotten").isEqualTo(1);
    }
}
