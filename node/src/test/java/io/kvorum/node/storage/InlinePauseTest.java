package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class InlinePauseTest {

    private final InlinePause pause = new InlinePause();

    @Test
    void runsAreAllowedUntilOneIsSlow() {
        assertThat(pause.paused(0)).isFalse();
        assertThat(pause.ran(1_000, InlinePause.SLOW_NANOS)).as("at the threshold: not slow").isFalse();
        assertThat(pause.paused(2_000)).isFalse();
    }

    @Test
    void aSlowRunPausesRunsForASecondAfterItEnded() {
        long start = 5_000_000;
        long took = InlinePause.SLOW_NANOS + 1;

        assertThat(pause.ran(start, took)).isTrue();

        long end = start + took;
        assertThat(pause.paused(end)).isTrue();
        assertThat(pause.paused(end + InlinePause.PAUSE_NANOS - 1)).isTrue();
        assertThat(pause.paused(end + InlinePause.PAUSE_NANOS)).isFalse();
        // state: a fast run meanwhile does not lift the pause, a later slow one extends it
        assertThat(pause.ran(end + 10, 100)).isFalse();
        assertThat(pause.paused(end + 20)).isTrue();
        assertThat(pause.ran(end + 100, took)).isTrue();
        assertThat(pause.paused(end + InlinePause.PAUSE_NANOS + 50)).isTrue();
    }

    @Test
    void nanoTimeReadingsMayBeNegativeOrWrapAround() {
        long start = Long.MAX_VALUE - 10;
        assertThat(pause.ran(start, InlinePause.SLOW_NANOS * 2)).isTrue();

        long insidePause = start + InlinePause.SLOW_NANOS * 2 + 1; // overflows to a negative reading
        assertThat(insidePause).isNegative();
        assertThat(pause.paused(insidePause)).isTrue();
        assertThat(pause.paused(insidePause + InlinePause.PAUSE_NANOS)).isFalse();
    }
}
