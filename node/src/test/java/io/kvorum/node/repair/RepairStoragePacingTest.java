package io.kvorum.node.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The tree scan's duty cycle: busy for a quarter of its time, waiting the other three quarters. */
class RepairStoragePacingTest {

    @Test
    void aBatchIsFollowedByThreeTimesItsDurationOfWaiting() {
        long busy = TimeUnit.MILLISECONDS.toNanos(10);
        assertThat(RepairStorage.TREE_SCAN_DUTY_CYCLE).isEqualTo(0.25);
        assertThat(RepairStorage.pauseAfter(busy)).isEqualTo(TimeUnit.MILLISECONDS.toNanos(30));
    }

    @Test
    void theWaitIsNeverNegativeNorLongerThanASecond() {
        assertThat(RepairStorage.pauseAfter(0)).isZero();
        assertThat(RepairStorage.pauseAfter(-5)).isZero();
        assertThat(RepairStorage.pauseAfter(TimeUnit.SECONDS.toNanos(10))).isEqualTo(TimeUnit.SECONDS.toNanos(1));
    }
}
