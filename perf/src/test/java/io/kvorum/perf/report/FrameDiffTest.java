package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class FrameDiffTest {

    @Test
    void selfShareCountsLeafFramesOnly() {
        Map<String, Double> shares = FrameDiff.selfShares(Stream.of(
                "java/lang/Thread.run;Netty.read;LevelDb.get 30",
                "java/lang/Thread.run;Netty.read 10",
                "java/lang/Thread.run;Writer.loop;LevelDb.get 20",
                "garbage line without a count"));

        assertThat(shares).containsOnlyKeys("LevelDb.get", "Netty.read");
        assertThat(shares.get("LevelDb.get")).isCloseTo(50.0 / 60, within(1e-12));
        assertThat(shares.get("Netty.read")).isCloseTo(10.0 / 60, within(1e-12));
    }

    @Test
    void largestAbsoluteChangesFromTheBaselineComeFirst() {
        Map<String, Double> baseline = Map.of("a", 0.50, "b", 0.30, "c", 0.20);
        Map<String, Double> after = Map.of("a", 0.20, "b", 0.32, "d", 0.48);

        List<FrameDiff.Change> top = FrameDiff.topChanges(List.of(baseline, after), 3);

        assertThat(top).extracting(FrameDiff.Change::frame).containsExactly("d", "a", "c");
        assertThat(top.get(0).change()).isCloseTo(0.48, within(1e-12));
        assertThat(top.get(1).change()).isCloseTo(-0.30, within(1e-12));
        assertThat(top.get(2).shares()).containsExactly(0.20, 0.0);
    }

    @Test
    void withThreeRunsTheLargestMoveOfAnyRunCounts() {
        List<FrameDiff.Change> top = FrameDiff.topChanges(
                List.of(Map.of("x", 0.1, "y", 0.1), Map.of("x", 0.15, "y", 0.1), Map.of("x", 0.1, "y", 0.4)), 1);

        assertThat(top).singleElement().satisfies(c -> {
            assertThat(c.frame()).isEqualTo("y");
            assertThat(c.change()).isCloseTo(0.3, within(1e-12));
        });
    }

    @Test
    void oneRunHasNothingToCompare() {
        assertThat(FrameDiff.topChanges(List.of(Map.of("a", 1.0)), 5)).isEmpty();
    }
}
