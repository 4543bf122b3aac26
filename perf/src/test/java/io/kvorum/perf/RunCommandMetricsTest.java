package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.perf.metrics.MetricsReport;
import io.kvorum.testkit.PrometheusText;
import io.kvorum.perf.metrics.Scrape;
import io.kvorum.perf.metrics.ScrapeLog;
import io.kvorum.perf.report.GcLog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a run writes into its folder from the scrapes of its nodes' /metrics. */
class RunCommandMetricsTest {

    private static final Instant START = Instant.parse("2026-11-23T12:00:00Z");
    private static final GcLog.Window WINDOW = new GcLog.Window(START, START.plusSeconds(2));

    @Test
    void nodesWithMetricsGetTheCsvAndAPlotPerMetric(@TempDir Path runDir) throws Exception {
        List<Scrape> n1 = List.of(scrape(0, 0), scrape(1000, 500), scrape(2000, 1100));

        String section = RunCommand.writeMetrics(new ScrapeLog(Map.of("n1", n1), Map.of()), WINDOW, runDir);

        assertThat(runDir.resolve(MetricsReport.CSV)).exists();
        assertThat(files(runDir)).containsExactlyInAnyOrder(MetricsReport.CSV, "metrics-requests.svg", "metrics-p99.svg",
                "metrics-queues.svg", "metrics-gc.svg", "metrics-anti-entropy.svg");
        assertThat(Files.readString(runDir.resolve("metrics-requests.svg"))).contains("<title>n1 get</title>");
        assertThat(section).contains("![metrics requests](metrics-requests.svg)");
    }

    @Test
    void nodesWithoutMetricsGetOneSentenceAndNoFiles(@TempDir Path runDir) throws Exception {
        ScrapeLog none = new ScrapeLog(Map.of("n1", List.of()), Map.of("n1", "GET /metrics answered 400"));

        String section = RunCommand.writeMetrics(none, WINDOW, runDir);

        assertThat(files(runDir)).isEmpty();
        assertThat(section.lines().filter(l -> !l.isBlank())).containsExactly("## Node metrics over the measured run",
                "No time series: the nodes expose no `/metrics` (n1: GET /metrics answered 400).");
    }

    private static Scrape scrape(long afterMillis, int gets) {
        return new Scrape(START.toEpochMilli() + afterMillis,
                PrometheusText.parse("kvorum_requests_total{code=\"200\",op=\"get\"} " + gets + "\n").samples());
    }

    private static List<String> files(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).toList();
        }
    }
}
