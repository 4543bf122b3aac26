package io.kvorum.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SteadyStateTest {

    @Test
    void theLastThreeWindowsMustAgreeWithinFivePercentOfTheirMean() {
        assertThat(SteadyState.isSteady(List.of(9000.0, 9100.0))).as("too few windows").isFalse();
        assertThat(SteadyState.isSteady(List.of(3000.0, 6000.0, 9000.0, 9100.0, 9050.0))).isTrue();
        assertThat(SteadyState.isSteady(List.of(6000.0, 8000.0, 9000.0))).as("still climbing").isFalse();
        assertThat(SteadyState.isSteady(List.of(9000.0, 9000.0, 8000.0))).as("a drop").isFalse();
        assertThat(SteadyState.isSteady(List.of(0.0, 0.0, 0.0))).as("nothing answered").isFalse();
    }
}
