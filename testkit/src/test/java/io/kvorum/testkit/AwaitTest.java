package io.kvorum.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {

    @Test
    void returnsOnceTheConditionHolds() {
        AtomicInteger polls = new AtomicInteger();
        Await.until("the third poll", Duration.ofSeconds(10), () -> polls.incrementAndGet() == 3);
        assertThat(polls).hasValue(3);
    }

    @Test
    void failsAfterItsBoundSayingWhatItAwaitedAndTheDetails() {
        assertThatThrownBy(() -> Await.until("never", Duration.ofMillis(100), () -> false, () -> "the log"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("timed out after 100 ms waiting for never\nthe log");
    }

    @Test
    void untilValueReturnsTheFirstValueThatMatches() {
        AtomicInteger polls = new AtomicInteger();
        assertThat(Await.untilValue("a value of 4", Duration.ofSeconds(10), polls::incrementAndGet, v -> v >= 4))
                .isEqualTo(4);
        assertThatThrownBy(() -> Await.untilValue("a negative", Duration.ofMillis(100), () -> 7, v -> v < 0))
                .isInstanceOf(AssertionError.class).hasMessageEndingWith("a negative\nlast seen: 7");
    }
}
