package io.kvorum.perf.metrics;

import io.kvorum.perf.report.Markdown;
import io.kvorum.perf.report.TimeSeriesPlot;
import io.kvorum.testkit.PrometheusText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The "Node metrics over the measured run" section of a run's report, from the scrapes of every
 * node: five plots on one time axis (request rate by op, p99 latency from the histogram, storage
 * queue depths, GC pause time per second, anti-entropy rounds), a line per node and label, so a
 * tail spike can be matched with what each node was doing, and a table of each node's own latency
 * over the whole run. Without any node's metrics, the section is one sentence saying why.
 */
public final class MetricsReport {

    /** The file the raw samples are written to, next to the report. */
    public static final String CSV = "metrics.csv";
    /** The quantiles of the table of {@link #insideTheNodes}. */
    private static final double[] INSIDE_QUANTILES = {0.5, 0.9, 0.99, 0.999};

    private final ScrapeLog log;
    private final long originMillis;
    private final double seconds;

    /**
     * @param log          what the scraper read
     * @param originMillis the measured run's start (epoch ms): x = 0 on every plot
     * @param seconds      the measured run's length: the x axis
     */
    public MetricsReport(ScrapeLog log, long originMillis, double seconds) {
        this.log = log;
        this.originMillis = originMillis;
        this.seconds = seconds;
    }

    /** File name to SVG text of each plot; empty when no node exposed metrics. */
    public Map<String, String> plots() {
        Map<String, String> plots = new LinkedHashMap<>();
        if (!log.hasSeries()) {
            return plots;
        }
        plots.put("metrics-requests.svg", TimeSeriesPlot.svg("Requests answered, by node and op (kvorum_requests_total)",
                "requests/s", lines(scrapes -> MetricSeries.rate(scrapes, MetricFamilies.REQUESTS, "op", originMillis), 1), seconds));
        plots.put("metrics-p99.svg", TimeSeriesPlot.svg("p99 latency per 1-s interval, all ops (kvorum_request_duration_seconds)",
                "ms", lines(scrapes -> Map.of("", MetricSeries.quantile(scrapes, MetricFamilies.REQUEST_DURATION, 0.99,
                        originMillis)), 1000), seconds));
        plots.put("metrics-queues.svg", TimeSeriesPlot.svg("Storage queue depth (kvorum_storage_queue_depth)", "requests queued",
                lines(scrapes -> MetricSeries.gauge(scrapes, MetricFamilies.STORAGE_QUEUE_DEPTH, "queue", originMillis), 1), seconds));
        plots.put("metrics-gc.svg", TimeSeriesPlot.svg("GC pause time per second (jvm_gc_pause_seconds_sum)", "ms paused per s",
                lines(scrapes -> MetricSeries.rate(scrapes, MetricFamilies.JVM_GC_PAUSE + "_sum", null, originMillis), 1000), seconds));
        plots.put("metrics-anti-entropy.svg", TimeSeriesPlot.svg("Anti-entropy rounds started, by outcome (kvorum_anti_entropy_rounds_total)",
                "rounds/s", lines(scrapes -> MetricSeries.rate(scrapes, MetricFamilies.ANTI_ENTROPY_ROUNDS, "outcome", originMillis), 1),
                seconds));
        return plots;
    }

    /**
     * The nodes whose first anti-entropy round since they started ended during the measured run, in
     * seconds from its start: their rounds counter was still 0 at the run's first scrape and grew later.
     * Such a round runs its code for the first time, and the JIT compiling it raises the tail of every
     * node on shared cores, once (perf/README.md, "The first minute after a
     * start").
     */
    public Map<String, Double> firstAntiEntropyRounds() {
        Map<String, Double> first = new TreeMap<>();
        log.scrapes().forEach((node, scrapes) -> {
            if (scrapes.isEmpty() || roundsSoFar(scrapes.get(0)) > 0) {
                return;
            }
            for (Scrape scrape : scrapes) {
                if (roundsSoFar(scrape) > 0) {
                    first.put(node, (scrape.epochMillis() - originMillis) / 1000.0);
                    return;
                }
            }
        });
        return first;
    }

    private static double roundsSoFar(Scrape scrape) {
        return scrape.series(MetricFamilies.ANTI_ENTROPY_ROUNDS).values().stream().mapToDouble(PrometheusText.Sample::value).sum();
    }

    /** The Markdown section, linking {@link #plots()} and {@link #CSV} when there are series. */
    public String markdown() {
        StringBuilder md = new StringBuilder("## Node metrics over the measured run\n\n");
        if (log.scrapes().isEmpty()) {
            return md.append("No time series: this run did not scrape the nodes (`--scrape-interval 0s`).\n\n").toString();
        }
        if (!log.hasSeries()) {
            return md.append("No time series: the nodes expose no `/metrics`")
                    .append(log.problems().isEmpty() ? "" : " (" + String.join("; ", log.problems().entrySet().stream()
                            .map(e -> e.getKey() + ": " + e.getValue()).toList()) + ")")
                    .append(".\n\n").toString();
        }
        List<String> counts = new ArrayList<>();
        log.scrapes().forEach((node, scrapes) -> counts.add(node + " " + scrapes.size()));
        md.append("Each node's `GET /metrics`, read by this tool every `--scrape-interval` (default 1 s) during the measured run (scrapes: ")
                .append(String.join(", ", counts)).append("; samples in `").append(CSV).append("`). A point is the change over the ")
                .append("interval ending there, in seconds from the run's start, the same axis as the GC pauses above.\n\n");
        log.problems().forEach((node, problem) -> md.append("- ").append(node).append(": some scrapes failed, the first: ")
                .append(problem).append('\n'));
        if (!log.problems().isEmpty()) {
            md.append('\n');
        }
        Map<String, Double> firstRounds = firstAntiEntropyRounds();
        if (!firstRounds.isEmpty()) {
            List<String> when = new ArrayList<>();
            firstRounds.forEach((node, seconds) -> when.add(String.format(Locale.ROOT, "%s at +%.1f s", node, seconds)));
            md.append("**Not the steady state:** the first anti-entropy round since the node started ended inside the ")
                    .append("measured run on ").append(String.join(", ", when)).append(". A first round runs its code for ")
                    .append("the first time, and the JIT compiling it raises the tail, once ")
                    .append("(perf/README.md, \"The first minute after a start\"). A `--warmup` of 60 s keeps the first ")
                    .append("rounds out of the measured run.\n\n");
        }
        md.append(insideTheNodes());
        for (String file : plots().keySet()) {
            md.append("![").append(file.replace(".svg", "").replace('-', ' ')).append("](").append(file).append(")\n\n");
        }
        return md.toString();
    }

    /**
     * A table of each node's time inside it over the whole measured run, by operation: what the
     * load tool's percentiles include beyond it is the kernel and waiting for a core, on both sides.
     */
    String insideTheNodes() {
        List<List<String>> rows = new ArrayList<>();
        log.scrapes().forEach((node, scrapes) -> MetricSeries.overWindow(scrapes, MetricFamilies.REQUEST_DURATION, "op",
                INSIDE_QUANTILES).forEach((op, q) -> {
                    List<String> row = new ArrayList<>(List.of(node, op, String.format(Locale.ROOT, "%,.0f", q.count())));
                    for (double v : q.values()) {
                        row.add(String.format(Locale.ROOT, "%.3f ms", v * 1000));
                    }
                    rows.add(row);
                }));
        if (rows.isEmpty()) {
            return "";
        }
        return "**Time inside the node**, from the first scrape of the run to the last: from a request read whole to "
                + "its answer written to the socket (`kvorum_request_duration_seconds`; each quantile interpolated within "
                + "its bucket, as Prometheus' `histogram_quantile` does, so read it as a range between two bucket bounds: "
                + "0.1, 0.25, 0.5, 1, 2.5, 5, 10 ms ...).\n\n"
                + Markdown.table(List.of("node", "op", "answered", "p50", "p90", "p99", "p99.9"), rows) + "\n";
    }

    /** A line per node and group of {@code series}, with values multiplied by {@code scale}. */
    private List<TimeSeriesPlot.Line> lines(Function<List<Scrape>, Map<String, List<MetricSeries.Point>>> series, double scale) {
        List<TimeSeriesPlot.Line> lines = new ArrayList<>();
        log.scrapes().forEach((node, scrapes) -> series.apply(scrapes).forEach((group, points) -> lines.add(
                new TimeSeriesPlot.Line(group.isEmpty() ? node : node + " " + group,
                        points.stream().map(p -> new double[] {p.seconds(), p.value() * scale}).toList()))));
        return lines;
    }
}
