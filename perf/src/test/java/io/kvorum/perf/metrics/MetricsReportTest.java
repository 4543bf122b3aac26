package io.kvorum.perf.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.PrometheusText;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsReportTest {

    private static final long START = 1_800_000_000_000L;

    /** One node's /metrics after {@code gets} gets and {@code puts} puts, as Micrometer writes it. */
    static String nodeScrape(int gets, int puts, int writeQueue, double gcSeconds, int rounds) {
        return """
                # TYPE kvorum_requests_total counter
                kvorum_requests_total{code="200",op="get",} %d.0
                kvorum_requests_total{code="201",op="put",} %d.0
                # TYPE kvorum_request_duration_seconds histogram
                kvorum_request_duration_seconds_bucket{op="get",le="0.001",} %d.0
                kvorum_request_duration_seconds_bucket{op="get",le="0.01",} %d.0
                kvorum_request_duration_seconds_bucket{op="get",le="+Inf",} %d.0
                kvorum_request_duration_seconds_count{op="get",} %d.0
                # TYPE kvorum_storage_queue_depth gauge
                kvorum_storage_queue_depth{queue="write",} %d.0
                kvorum_storage_queue_depth{queue="read",} 0.0
                # TYPE jvm_gc_pause_seconds summary
                jvm_gc_pause_seconds_count{action="end of minor GC",cause="G1 Evacuation Pause",} 3.0
                jvm_gc_pause_seconds_sum{action="end of minor GC",cause="G1 Evacuation Pause",} %s
                # TYPE jvm_gc_pause_seconds_max gauge
                jvm_gc_pause_seconds_max{action="end of minor GC",cause="G1 Evacuation Pause",} 0.012
                # TYPE kvorum_anti_entropy_rounds_total counter
                kvorum_anti_entropy_rounds_total{outcome="ok",peer="n2",} %d.0
                # TYPE jvm_classes_loaded_classes gauge
                jvm_classes_loaded_classes 5000.0
                """.formatted(gets, puts, gets * 9 / 10, gets, gets, gets, writeQueue, gcSeconds, rounds);
    }

    private static ScrapeLog twoNodes() {
        List<Scrape> n1 = new ArrayList<>();
        List<Scrape> n2 = new ArrayList<>();
        for (int s = 0; s <= 5; s++) {
            // n1 serves 1000 gets/s; at second 3 its write queue fills and it pauses 40 ms for GC
            n1.add(new Scrape(START + s * 1000L, PrometheusText.parse(nodeScrape(1000 * s, 10 * s, s == 3 ? 57 : 0,
                    s >= 3 ? 0.040 : 0.0, s >= 4 ? 1 : 0)).samples()));
            n2.add(new Scrape(START + s * 1000L, PrometheusText.parse(nodeScrape(0, 0, 0, 0.0, 0)).samples()));
        }
        Map<String, List<Scrape>> scrapes = new LinkedHashMap<>();
        scrapes.put("n1", n1);
        scrapes.put("n2", n2);
        return new ScrapeLog(scrapes, Map.of());
    }

    @Test
    void drawsFivePlotsWithALinePerNodeAndLabel() {
        MetricsReport report = new MetricsReport(twoNodes(), START, 5);

        Map<String, String> plots = report.plots();

        assertThat(plots).containsOnlyKeys("metrics-requests.svg", "metrics-p99.svg", "metrics-queues.svg", "metrics-gc.svg",
                "metrics-anti-entropy.svg");
        assertThat(titles(plots.get("metrics-requests.svg"))).containsExactly("n1 get", "n1 put", "n2 get", "n2 put");
        assertThat(titles(plots.get("metrics-queues.svg"))).containsExactly("n1 read", "n1 write", "n2 read", "n2 write");
        assertThat(titles(plots.get("metrics-gc.svg"))).containsExactly("n1", "n2");
        assertThat(titles(plots.get("metrics-anti-entropy.svg"))).containsExactly("n1 ok", "n2 ok");
        assertThat(titles(plots.get("metrics-p99.svg"))).as("n2 answered nothing: no point, an empty line")
                .containsExactly("n1", "n2");
        assertThat(points(plots.get("metrics-requests.svg"), "n1 get")).hasSize(5);
        assertThat(points(plots.get("metrics-gc.svg"), "n1")).hasSize(5);
        // the one spike of n1's GC (40 ms in second 3) is the top of its plot, whose axis ends at 50 ms/s
        assertThat(plots.get("metrics-gc.svg")).contains(">50</text>").contains("GC pause time per second");
        for (String svg : plots.values()) {
            assertThat(svg).startsWith("<svg").endsWith("</svg>\n").doesNotContain("NaN");
        }
    }

    @Test
    void theSectionLinksEachPlotAndTheCsv(@TempDir Path dir) throws IOException {
        ScrapeLog log = twoNodes();
        MetricsReport report = new MetricsReport(log, START, 5);

        String md = report.markdown();
        log.writeCsv(dir.resolve(MetricsReport.CSV));

        assertThat(md).startsWith("## Node metrics over the measured run\n\n").contains("scrapes: n1 6, n2 6")
                .contains("`metrics.csv`");
        for (String file : report.plots().keySet()) {
            assertThat(md).contains("](" + file + ")");
        }
        List<String> csv = Files.readAllLines(dir.resolve(MetricsReport.CSV), StandardCharsets.UTF_8);
        assertThat(csv.get(0)).isEqualTo(ScrapeLog.CSV_HEADER);
        assertThat(csv).contains("n1,1800000003000,kvorum_storage_queue_depth,queue=write,57.0")
                .contains("n1,1800000005000,jvm_gc_pause_seconds_sum,action=end of minor GC;cause=G1 Evacuation Pause,0.04");
        assertThat(csv).as("families nobody reads are left out").noneMatch(l -> l.contains("jvm_classes_loaded_classes"));
    }

    @Test
    void theSectionTabulatesTheTimeInsideEachNodeOverTheWholeRun() {
        String md = new MetricsReport(twoNodes(), START, 5).markdown();

        // n1 answered 5000 gets in the run, 90% within 1 ms, all within 10 ms; n2 none (no row).
        assertThat(md).contains("**Time inside the node**")
                .contains("| n1 | get | 5,000 | 0.556 ms | 1.000 ms | 9.100 ms | 9.910 ms |")
                .doesNotContain("| n2 |");
    }

    @Test
    void nodesWithoutMetricsGetOneSentenceAndNoPlots() {
        Map<String, List<Scrape>> none = new LinkedHashMap<>();
        none.put("n1", List.of());
        ScrapeLog log = new ScrapeLog(none, Map.of("n1", "GET /metrics answered 400"));
        MetricsReport report = new MetricsReport(log, START, 5);

        assertThat(report.plots()).isEmpty();
        assertThat(report.markdown()).isEqualTo("## Node metrics over the measured run\n\n"
                + "No time series: the nodes expose no `/metrics` (n1: GET /metrics answered 400).\n\n");
    }

    @Test
    void aRunThatDidNotScrapeSaysSoRatherThanBlamingTheNodes() {
        MetricsReport report = new MetricsReport(ScrapeLog.NONE, START, 5);

        assertThat(report.plots()).isEmpty();
        assertThat(report.markdown()).contains("did not scrape the nodes").doesNotContain("expose no");
    }

    private static List<String> titles(String svg) {
        List<String> titles = new ArrayList<>();
        Matcher m = Pattern.compile("<polyline class=\"series\"[^>]*><title>([^<]*)</title>").matcher(svg);
        while (m.find()) {
            titles.add(m.group(1));
        }
        return titles;
    }

    private static List<String> points(String svg, String title) {
        Matcher m = Pattern.compile("points=\"([^\"]*)\"><title>" + Pattern.quote(title) + "</title>").matcher(svg);
        assertThat(m.find()).as("a line titled %s", title).isTrue();
        return m.group(1).isEmpty() ? List.of() : List.of(m.group(1).split(" "));
    }

    @Test
    void aFirstAntiEntropyRoundInsideTheRunIsPointedOut() {
        MetricsReport report = new MetricsReport(twoNodes(), START, 5);

        assertThat(report.firstAntiEntropyRounds()).containsExactly(Map.entry("n1", 4.0));
        assertThat(report.markdown()).contains("**Not the steady state:**").contains("measured run on n1 at +4.0 s.");
    }

    @Test
    void roundsThatAreNotTheFirstAreNotPointedOut() {
        List<Scrape> n1 = new ArrayList<>();
        for (int s = 0; s <= 5; s++) {
            n1.add(new Scrape(START + s * 1000L, PrometheusText.parse(nodeScrape(1000 * s, 10 * s, 0, 0.0, s >= 3 ? 2 : 1)).samples()));
        }
        MetricsReport report = new MetricsReport(new ScrapeLog(Map.of("n1", n1), Map.of()), START, 5);

        assertThat(report.firstAntiEntropyRounds()).isEmpty();
        assertThat(report.markdown()).doesNotContain("Not the steady state");
    }
}
