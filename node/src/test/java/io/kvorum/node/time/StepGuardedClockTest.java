package io.kvorum.node.time;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StepGuardedClockTest {

    private static final long START = 1_700_000_000_000L;

    private final ManualClock wall = new ManualClock(START);
    private final StepGuardedClock guarded = new StepGuardedClock(wall);

    @Test
    void aWallClockThatRunsNormallyIsReadUnchanged() {
        assertThat(guarded.currentTimeMillis()).isEqualTo(START);
        for (int i = 1; i <= 100; i++) {
            wall.advance(7);
            assertThat(guarded.currentTimeMillis()).isEqualTo(START + 7L * i);
        }
    }

    @Test
    void aStepAheadIsTakenInAtMostTenPercentFasterThanRealTime() {
        guarded.currentTimeMillis();
        wall.set(START + 2_000); // the wall clock jumps 2 s ahead, no real time passes
        assertThat(guarded.currentTimeMillis()).isEqualTo(START);

        wall.advance(1_000);
        assertThat(guarded.currentTimeMillis()).as("after 1 s of real time").isEqualTo(START + 1_100);

        for (int i = 0; i < 19; i++) {
            wall.advance(1_000);
            guarded.currentTimeMillis();
        }
        assertThat(guarded.currentTimeMillis()).as("after 20 s: caught up").isEqualTo(wall.currentTimeMillis());
        wall.advance(5);
        assertThat(guarded.currentTimeMillis()).isEqualTo(wall.currentTimeMillis());
    }

    @Test
    void aStepBackIsTakenAtOnce() {
        wall.advance(10_000);
        guarded.currentTimeMillis();
        wall.set(START);
        assertThat(guarded.currentTimeMillis()).isEqualTo(START);
    }

    @Test
    void theNodesClockStampsThroughTheGuardAndCountsPeerTimestampsItRefuses() {
        HybridLogicalClock hlc = HybridLogicalClock.guardedAgainstSteps(wall, java.time.Duration.ofMillis(500));
        assertThat(HybridLogicalClock.physicalMillis(hlc.now())).isEqualTo(START);
        wall.set(START + 2_000);
        assertThat(HybridLogicalClock.physicalMillis(hlc.now())).as("stamped right after a jump ahead").isEqualTo(START);

        long farAhead = HybridLogicalClock.pack(wall.currentTimeMillis() + 60_000, 0);
        assertThat(hlc.observeFromPeer(farAhead)).isFalse();
        assertThat(hlc.observeFromPeer(HybridLogicalClock.pack(START + 1, 0))).isTrue();
        assertThat(hlc.refusedFromPeers()).isEqualTo(1);
    }
}
