package io.kvorum.perf.search;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RateSearchTest {

    /** A target whose p99 is 2 ms up to its capacity and 500 ms beyond; it achieves what it is asked. */
    private static RateSearch.Measurement capacity(int capacity) {
        return rate -> new RateSearch.Step(rate, rate, 1, rate <= capacity ? 2 : 500, 0, false);
    }

    @Test
    void convergesWithinFivePercentBelowTheCapacity() throws Exception {
        List<RateSearch.Step> printed = new ArrayList<>();
        RateSearch.Outcome outcome = new RateSearch(10, 100_000, 20).search(0, capacity(23_000), printed::add);

        assertThat(outcome.sustainedRate()).isLessThanOrEqualTo(23_000).isGreaterThanOrEqualTo((int) (23_000 / 1.05));
        assertThat(printed).isEqualTo(outcome.steps());
        assertThat(outcome.steps().get(0).rate()).isEqualTo(50_000);
        assertThat(outcome.steps().get(0).passed()).isFalse();
        assertThat(outcome.steps()).filteredOn(RateSearch.Step::passed).allMatch(s -> s.rate() <= 23_000);
        assertThat(outcome.steps()).filteredOn(s -> !s.passed()).allMatch(s -> s.rate() > 23_000);
    }

    @Test
    void stopsAfterTheStepLimit() throws Exception {
        RateSearch.Outcome outcome = new RateSearch(10, 100_000, 3).search(0, capacity(23_456), s -> { });

        assertThat(outcome.steps()).extracting(RateSearch.Step::rate).containsExactly(50_000, 25_000, 12_500);
        assertThat(outcome.sustainedRate()).isEqualTo(12_500);
    }

    @Test
    void startsAtTheGivenRateAndStopsAtTheMaximumWhenEverythingPasses() throws Exception {
        RateSearch.Outcome outcome = new RateSearch(10, 1000, 10).search(1000, capacity(1_000_000), s -> { });

        assertThat(outcome.steps()).extracting(RateSearch.Step::rate).containsExactly(1000);
        assertThat(outcome.sustainedRate()).isEqualTo(1000);
    }

    @Test
    void errorsOrAShortfallInThroughputFailAStepWhateverItsLatency() {
        RateSearch search = new RateSearch(10, 100_000, 10);

        assertThat(search.passes(1000, 1000, 2, 0)).isTrue();
        assertThat(search.passes(1000, 1000, 2, 1)).isFalse();
        assertThat(search.passes(1000, 949, 2, 0)).isFalse();
        assertThat(search.passes(1000, 950, 10, 0)).isTrue();
        assertThat(search.passes(1000, 1000, 10.01, 0)).isFalse();
    }

    @Test
    void nothingPassesGivesZero() throws Exception {
        RateSearch.Outcome outcome = new RateSearch(10, 100_000, 30).search(0, rate -> new RateSearch.Step(rate, rate, 1, 99, 0, false), s -> { });

        assertThat(outcome.sustainedRate()).isZero();
        assertThat(outcome.steps()).hasSizeLessThanOrEqualTo(30).allMatch(s -> !s.passed());
    }
}
