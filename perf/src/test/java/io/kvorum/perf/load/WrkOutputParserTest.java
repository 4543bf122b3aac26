package io.kvorum.perf.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Against outputs captured from wrk2 and Debian's wrk 4.1 run with perf/wrk scripts against a node. */
class WrkOutputParserTest {

    private static String resource(String name) throws IOException {
        try (InputStream in = WrkOutputParserTest.class.getResourceAsStream("/wrk-output/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void wrk2SummaryDistributionSpectrumAndStatuses() throws IOException {
        WrkOutput out = WrkOutputParser.parse(resource("wrk2-put-2000.txt"));

        assertThat(out.requests()).isEqualTo(5916);
        assertThat(out.durationSeconds()).isCloseTo(3.01, within(1e-9));
        assertThat(out.requestsPerSec()).isCloseTo(1964.75, within(1e-9));
        assertThat(out.transferPerSec()).isEqualTo("82.50KB");
        assertThat(out.errors()).isZero();
        assertThat(out.statusCounts()).containsExactly(Map.entry(201, 5916L));
        assertThat(out.percentiles()).containsEntry(50.0, 2.08).containsEntry(99.9, 159.62).containsEntry(100.0, 168.83)
                .hasSize(8);
        assertThat(out.maxMs()).isEqualTo(168.704);
        assertThat(out.spectrum().get(0)).isEqualTo(new WrkOutput.SpectrumPoint(0.169, 0.0, 1));
        assertThat(out.spectrum().get(out.spectrum().size() - 1)).isEqualTo(new WrkOutput.SpectrumPoint(168.831, 1.0, 5911));
        assertThat(out.spectrum()).isSortedAccordingTo((a, b) -> Double.compare(a.percentile(), b.percentile()));
        assertThat(out.latencyAt(99)).hasValue(144.64);
    }

    @Test
    void wrk2NonSuccessAnswersAreCountedPerStatusAndAsErrors() throws IOException {
        WrkOutput out = WrkOutputParser.parse(resource("wrk2-delete-non2xx.txt"));

        assertThat(out.non2xx()).isEqualTo(881);
        assertThat(out.errors()).isEqualTo(881);
        assertThat(out.statusCounts()).containsExactly(Map.entry(400, 881L));
    }

    @Test
    void wrk2LatenciesInSecondsAndMixedStatuses() throws IOException {
        WrkOutput out = WrkOutputParser.parse(resource("wrk2-put-overload-504.txt"));

        assertThat(out.non2xx()).isEqualTo(12);
        assertThat(out.statusCounts()).containsExactly(Map.entry(201, 449L), Map.entry(504, 12L));
        assertThat(out.maxMs()).isEqualTo(3819.52);
        assertThat(out.latencyAt(50).getAsDouble()).isGreaterThan(100);
    }

    @Test
    void wrkClosedLoopHasFourPercentilesNoSpectrumAndMaxFromThreadStats() throws IOException {
        WrkOutput out = WrkOutputParser.parse(resource("wrk-put-saturation.txt"));

        assertThat(out.requests()).isEqualTo(95304);
        assertThat(out.requestsPerSec()).isCloseTo(31463.63, within(1e-9));
        assertThat(out.percentiles()).containsExactly(Map.entry(50.0, 0.423), Map.entry(75.0, 0.558),
                Map.entry(90.0, 0.813), Map.entry(99.0, 3.69));
        assertThat(out.spectrum()).isEmpty();
        assertThat(out.maxMs()).isEqualTo(10.01);
        assertThat(out.latencyAt(99.9)).isEmpty();
    }

    @Test
    void wrkSocketErrorsCountAsErrors() throws IOException {
        WrkOutput out = WrkOutputParser.parse(resource("wrk-put-socket-errors.txt"));

        assertThat(out.socketErrors()).isEqualTo(new WrkOutput.SocketErrors(0, 0, 0, 186));
        assertThat(out.errors()).isEqualTo(186 + 186);
        assertThat(out.statusCounts()).containsEntry(504, 186L);
    }

    @Test
    void aUsageMessageIsNotASummary() {
        assertThatThrownBy(() -> WrkOutputParser.parse("Usage: wrk <options> <url>\n  -R, --rate <T>\n"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a wrk/wrk2 summary");
    }

    @Test
    void unitsConvertToMilliseconds() {
        assertThat(WrkOutputParser.toMillis("715.00us")).isCloseTo(0.715, within(1e-12));
        assertThat(WrkOutputParser.toMillis("1.40s")).isCloseTo(1400, within(1e-9));
        assertThat(WrkOutputParser.toMillis("2.00m")).isCloseTo(120_000, within(1e-9));
    }
}
