package io.kvorum.perf;

import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Preloader;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.metrics.MetricsReport;
import io.kvorum.perf.metrics.MetricsScraper;
import io.kvorum.perf.metrics.ScrapeLog;
import io.kvorum.perf.profile.AsyncProfiler;
import io.kvorum.perf.report.CpuUse;
import io.kvorum.perf.report.GcLog;
import io.kvorum.perf.report.GitInfo;
import io.kvorum.perf.report.LatencyPlot;
import io.kvorum.perf.report.MachineInfo;
import io.kvorum.perf.report.NodeGc;
import io.kvorum.perf.report.RunReport;
import io.kvorum.perf.report.RunResult;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvorum perf run}: start the nodes, preload, warm up, measure one fixed-rate wrk2 run
 * (or a closed-loop wrk run with --saturation) while async-profiler records n1, stop everything,
 * and write report.md, result.json, latency.svg and the flame graphs into the run folder. Every
 * node's /metrics is scraped once a second (--scrape-interval) during the measured run, for the
 * report's time series.
 */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "One measured run: cluster, preload, warm-up, wrk2 at a fixed rate, profile, report.")
final class RunCommand implements Callable<Integer> {

    /** Below this share of the requested rate, a fixed-rate run says it missed it (perf search's own bar). */
    static final double MISSED_RATE_SHARE = io.kvorum.perf.search.RateSearch.MIN_ACHIEVED_SHARE;

    /** How long one scrape may take: a node busy in a GC pause answers late, not never. */
    static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(2);

    @Mixin
    LoadOptions options;

    @Option(names = "--rate", description = "Requests/s in total (required unless --saturation).")
    Integer rate;

    @Option(names = "--saturation", description = "Closed loop with Debian's wrk: throughput at saturation; latency is NOT corrected.")
    boolean saturation;

    @Option(names = "--scrape-interval", description = "How often each node's /metrics is read during the measured run "
            + "(default ${DEFAULT-VALUE}; 0s: never, e.g. to measure what the scrapes cost).",
            defaultValue = "1s", converter = LoadOptions.DurationConverter.class)
    Duration scrapeInterval;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        try {
            options.validate();
            if (rate == null && !saturation) {
                throw new IllegalArgumentException("--rate is required (requests/s), or --saturation for a closed-loop run");
            }
            if (rate != null && rate < 1) {
                throw new IllegalArgumentException("--rate must be positive (requests/s in total), got " + rate);
            }
        } catch (IllegalArgumentException e) {
            err.println("kvorum perf run: " + e.getMessage());
            return 2;
        }
        Optional<LoadTool> tool = saturation ? LoadTool.findWrk(System.getenv()) : LoadTool.findWrk2(System.getenv());
        if (tool.isEmpty()) {
            err.println("kvorum perf run: " + (saturation ? LoadTool.WRK_MISSING : LoadTool.wrk2Missing(System.getenv())));
            return 2;
        }
        String label = options.label != null ? options.label : options.defaultLabel(saturation ? "saturation" : rate + "rps");
        Path runDir = RunFolder.create(options.out, label);
        String loadBefore = MachineInfo.loadAverage();
        LoadRunner runner;
        LoadSpec loadSpec;
        WrkOutput output;
        List<BenchmarkSession.Profile> profiles = new ArrayList<>();
        java.util.Map<String, String> statuses;
        List<String> nodeCommands;
        List<NodeGc> gc;
        GcLog.Window window;
        CpuUse cpu;
        Path scriptDir = Path.of("perf", "wrk").toAbsolutePath();
        Preloader.Result preload;
        ScrapeLog scrapes;
        ClusterSecurity security = ClusterSecurity.create(runDir, options.tls, options.token);
        LoadTool secured = tool.get().withEnvironment(security.toolEnvironment());
        runner = new LoadRunner(secured);
        try (BenchmarkSession session = BenchmarkSession.open(options, security, secured, scriptDir, runDir, err)) {
            loadSpec = options.loadSpec(session.target(), scriptDir, saturation ? 0 : rate, options.duration);
            session.warmUp(runner, loadSpec);
            if (scrapeInterval.isZero()) {
                output = session.measure(runner, loadSpec, runDir.resolve("wrk.txt"), options.profileEvents(), profiles);
                scrapes = ScrapeLog.NONE;
            } else {
                try (MetricsScraper scraper = MetricsScraper.start(session.nodeUris(), scrapeInterval, SCRAPE_TIMEOUT,
                        session.security())) {
                    output = session.measure(runner, loadSpec, runDir.resolve("wrk.txt"), options.profileEvents(), profiles);
                    scrapes = scraper.stop();
                }
            }
            statuses = session.statuses();
            nodeCommands = session.nodeCommands();
            preload = session.preload();
            window = session.lastWindow();
            cpu = session.lastCpu();
            gc = session.gc(window);
        }
        if (output.durationSeconds() < 0.9 * options.duration.toMillis() / 1000.0) {
            err.printf("kvorum perf run: the load tool stopped after %.1f s of the %d s asked (interrupted?); no report "
                    + "written, the run folder %s holds what was recorded%n", output.durationSeconds(), options.duration.toSeconds(), runDir);
            return 1;
        }
        RunResult result = RunResult.of(label, saturation ? RunResult.CLOSED_LOOP : RunResult.FIXED_RATE,
                options.workload.name().toLowerCase(), options.url != null ? 0 : options.nodes, saturation ? 0 : rate, output,
                gc, window,
                profiles.get(0).files().contains(AsyncProfiler.CPU_COLLAPSED) ? AsyncProfiler.CPU_COLLAPSED : null, cpu);
        result.write(runDir.resolve("result.json"));
        Files.writeString(runDir.resolve("latency.svg"),
                LatencyPlot.svg("Latency by percentile: " + label, List.of(result.series())), StandardCharsets.UTF_8);
        String metricsSection = writeMetrics(scrapes, window, runDir);
        RunReport report = new RunReport("Kvorum perf run: " + label,
                ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME), GitInfo.of(Path.of("")),
                RunFolder.commandLine(spec.commandLine().getParseResult().originalArgs().toArray(String[]::new)),
                nodeCommands, preload.summary(), preload.command(), loadSpec.shellLine(runner.tool()), MachineInfo.current(),
                nodeJvm(), options.heap,
                loadBefore, MachineInfo.loadAverage(), result, output, gc, window, profiles.get(0).description(),
                profiles.get(0).files(), statuses, metricsSection);
        Files.writeString(runDir.resolve("report.md"), report.markdown(), StandardCharsets.UTF_8);
        System.out.printf("%s: %,.0f req/s achieved (requested %s), p50 %s, p99 %s, errors %d%n", label, result.achievedRate(),
                saturation ? "saturation" : String.format("%,d", rate), fmt(result, "p50"), fmt(result, "p99"), result.errors());
        if (!saturation && result.achievedRate() < MISSED_RATE_SHARE * rate) {
            System.out.printf("the rate was missed: %,.0f of %,d req/s (%.0f%%); the latencies are of a node that could not "
                    + "keep up, or of a load tool short of a core%n", result.achievedRate(), rate, 100 * result.achievedRate() / rate);
        }
        if (result.cpu() != null && result.cpu().isStillCompiling()) {
            System.out.printf("not the steady state: the JIT compilers took %.0f%% of the nodes' CPU (report.md, "
                    + "\"Waiting for a core\"); a longer --warmup measures it%n", 100 * result.cpu().compilerShare());
        }
        System.out.println("report: " + runDir.resolve("report.md"));
        return 0;
    }

    /**
     * Writes the scraped samples and the plots of the nodes' metrics into the run folder and
     * returns the report's section about them (one sentence when the nodes expose none).
     */
    static String writeMetrics(ScrapeLog scrapes, GcLog.Window window, Path runDir) throws IOException {
        long origin = window.start().toEpochMilli();
        MetricsReport metrics = new MetricsReport(scrapes, origin, window.seconds());
        if (scrapes.hasSeries()) {
            scrapes.writeCsv(runDir.resolve(MetricsReport.CSV));
        }
        for (Map.Entry<String, String> plot : metrics.plots().entrySet()) {
            Files.writeString(runDir.resolve(plot.getKey()), plot.getValue(), StandardCharsets.UTF_8);
        }
        return metrics.markdown();
    }

    private static String fmt(RunResult result, String percentile) {
        return io.kvorum.perf.report.Markdown.ms(result.percentilesMs().get(percentile));
    }

    /** The nodes run on the same java as this command (LocalCluster starts them with java.home). */
    static String nodeJvm() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
    }
}
