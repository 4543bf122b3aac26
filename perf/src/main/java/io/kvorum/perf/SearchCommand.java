package io.kvorum.perf;

import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Preloader;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.profile.AsyncProfiler;
import io.kvorum.perf.report.CpuUse;
import io.kvorum.perf.report.GcLog;
import io.kvorum.perf.report.GitInfo;
import io.kvorum.perf.report.LatencyPlot;
import io.kvorum.perf.report.MachineInfo;
import io.kvorum.perf.report.Markdown;
import io.kvorum.perf.report.NodeGc;
import io.kvorum.perf.report.RunReport;
import io.kvorum.perf.report.RunResult;
import io.kvorum.perf.search.RateSearch;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvorum perf search}: the highest fixed rate whose p99 stays within a bound, found by
 * bisection ({@link RateSearch}) on one cluster, preloaded and warmed up once. With --profile (the
 * default) the answer is measured once more under async-profiler for the flame graphs.
 */
@Command(name = "search", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "Bisect the fixed rate: the highest with p99 <= bound, no errors and >= 95%% of it achieved.")
final class SearchCommand implements Callable<Integer> {

    @Mixin
    LoadOptions options;

    @Option(names = "--p99", description = "Latency bound of a passing step (default ${DEFAULT-VALUE}).", defaultValue = "10ms",
            converter = LoadOptions.DurationConverter.class)
    Duration p99Bound;

    @Option(names = "--max-rate", description = "Upper end of the search, req/s (default ${DEFAULT-VALUE}).", defaultValue = "100000")
    int maxRate;

    @Option(names = "--rate", description = "First rate to try (default: half of --max-rate).", defaultValue = "0")
    int firstRate;

    @Option(names = "--step-duration", description = "Length of each step (default ${DEFAULT-VALUE}).", defaultValue = "10s",
            converter = LoadOptions.DurationConverter.class)
    Duration stepDuration;

    @Option(names = "--max-steps", description = "At most this many steps (default ${DEFAULT-VALUE}).", defaultValue = "10")
    int maxSteps;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        try {
            options.validate();
        } catch (IllegalArgumentException e) {
            err.println("kvorum perf search: " + e.getMessage());
            return 2;
        }
        Optional<LoadTool> tool = LoadTool.findWrk2(System.getenv());
        if (tool.isEmpty()) {
            err.println("kvorum perf search: " + LoadTool.wrk2Missing(System.getenv()));
            return 2;
        }
        String label = options.label != null ? options.label : options.defaultLabel("search");
        Path runDir = RunFolder.create(options.out, label);
        String loadBefore = MachineInfo.loadAverage();
        LoadRunner runner;
        RateSearch search = new RateSearch(p99Bound.toNanos() / 1e6, maxRate, maxSteps);
        Map<Integer, WrkOutput> outputs = new HashMap<>();
        Map<Integer, GcLog.Window> windows = new HashMap<>();
        Map<Integer, CpuUse> cpus = new HashMap<>();
        List<BenchmarkSession.Profile> profiles = new ArrayList<>();
        RateSearch.Outcome outcome;
        WrkOutput shown;
        LoadSpec shownSpec;
        Map<String, String> statuses;
        List<String> nodeCommands;
        List<NodeGc> gc;
        GcLog.Window window;
        CpuUse cpu;
        Path scriptDir = Path.of("perf", "wrk").toAbsolutePath();
        Preloader.Result preload;
        ClusterSecurity security = ClusterSecurity.create(runDir, options.tls, options.token);
        LoadTool secured = tool.get().withEnvironment(security.toolEnvironment());
        runner = new LoadRunner(secured);
        try (BenchmarkSession session = BenchmarkSession.open(options, security, secured, scriptDir, runDir, err)) {
            LoadSpec base = options.loadSpec(session.target(), scriptDir, 1, stepDuration);
            int first = firstRate > 0 ? firstRate : Math.max(1, maxRate / 2);
            // Warm up gently: at the first probe rate an overloaded node would spend the warm-up queueing.
            session.warmUp(runner, base.withRate(Math.max(1, Math.min(first, maxRate / 4))));
            System.out.printf("%-8s %10s %10s %10s %10s %8s  %s%n", "step", "rate", "achieved", "p50", "p99", "errors", "result");
            outcome = search.search(first, rate -> {
                WrkOutput out = session.timedRun(runner, base.withRate(rate),
                        runDir.resolve(String.format(Locale.ROOT, "step-%06d.txt", rate)));
                outputs.put(rate, out);
                windows.put(rate, session.lastWindow());
                cpus.put(rate, session.lastCpu());
                return new RateSearch.Step(rate, out.requestsPerSec(), out.latencyAt(50).orElse(Double.NaN),
                        out.latencyAt(99).orElse(Double.NaN), out.errors(), false);
            }, step -> System.out.printf(Locale.ROOT, "%-8d %10d %10.0f %10s %10s %8d  %s%n", outputsSize(outputs), step.rate(),
                    step.achieved(), Markdown.ms(step.p50Ms()), Markdown.ms(step.p99Ms()), step.errors(),
                    step.passed() ? "pass" : "FAIL"));
            int answer = outcome.sustainedRate();
            int shownRate = answer > 0 ? answer : outcome.steps().get(outcome.steps().size() - 1).rate();
            shownSpec = base.withRate(shownRate);
            if (answer > 0 && !options.profileEvents().isEmpty()) {
                err.printf("profiling one more step at the answer, %,d req/s ...%n", answer);
                shown = session.measure(runner, shownSpec, runDir.resolve("wrk.txt"), options.profileEvents(), profiles);
                window = session.lastWindow();
                cpu = session.lastCpu();
            } else {
                shown = outputs.get(shownRate);
                window = windows.get(shownRate);
                cpu = cpus.get(shownRate);
                profiles.add(new BenchmarkSession.Profile("Not profiled (" + (answer == 0 ? "no step passed" : "--profile none") + ").", List.of()));
            }
            statuses = session.statuses();
            nodeCommands = session.nodeCommands();
            preload = session.preload();
            gc = session.gc(window);
        }
        RunResult result = RunResult.of(label, RunResult.FIXED_RATE, options.workload.name().toLowerCase(Locale.ROOT),
                options.url != null ? 0 : options.nodes, shownSpec.rate(), shown, gc, window,
                profiles.get(0).files().contains(AsyncProfiler.CPU_COLLAPSED) ? AsyncProfiler.CPU_COLLAPSED : null, cpu);
        result.write(runDir.resolve("result.json"));
        List<LatencyPlot.Series> series = new ArrayList<>();
        for (RateSearch.Step step : outcome.steps()) {
            series.add(RunResult.of(step.rate() + " req/s" + (step.passed() ? "" : " (fail)"), RunResult.FIXED_RATE, "", 0,
                    step.rate(), outputs.get(step.rate()), null, null, null, null).series());
        }
        Files.writeString(runDir.resolve("latency.svg"), LatencyPlot.svg("Latency by percentile per step: " + label, series),
                StandardCharsets.UTF_8);
        String answerText = outcome.sustainedRate() > 0
                ? String.format(Locale.ROOT, "**%,d req/s** is the highest rate that passed (p99 <= %s, no errors, >= 95%% achieved) "
                + "in %d steps of %d s.", outcome.sustainedRate(), Markdown.ms(p99Bound.toNanos() / 1e6), outcome.steps().size(),
                stepDuration.toSeconds())
                : "**No rate passed** (p99 <= " + Markdown.ms(p99Bound.toNanos() / 1e6) + ", no errors, >= 95% achieved).";
        List<List<String>> rows = new ArrayList<>();
        for (int i = 0; i < outcome.steps().size(); i++) {
            RateSearch.Step s = outcome.steps().get(i);
            rows.add(List.of(Integer.toString(i + 1), Markdown.count(s.rate()), Markdown.count(s.achieved()), Markdown.ms(s.p50Ms()),
                    Markdown.ms(s.p99Ms()), Long.toString(s.errors()), s.passed() ? "pass" : "fail"));
        }
        String steps = "## Search\n\n" + answerText + "\n\n"
                + Markdown.table(List.of("step", "rate", "achieved", "p50", "p99", "errors", "result"), rows)
                + "\nThe tables above (throughput, latency, profile) are of the " + (profiles.get(0).files().isEmpty()
                ? "step at " : "extra profiled step at ") + Markdown.count(shownSpec.rate()) + " req/s; the plot has every step. "
                + "Raw outputs: step-*.txt.\n";
        RunReport report = new RunReport("Kvorum perf search: " + label,
                ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME), GitInfo.of(Path.of("")),
                RunFolder.commandLine(spec.commandLine().getParseResult().originalArgs().toArray(String[]::new)),
                nodeCommands, preload.summary(), preload.command(), shownSpec.shellLine(runner.tool()), MachineInfo.current(),
                RunCommand.nodeJvm(), options.heap,
                loadBefore, MachineInfo.loadAverage(), result, shown, gc, window, profiles.get(0).description(), profiles.get(0).files(),
                statuses, steps);
        Files.writeString(runDir.resolve("report.md"), report.markdown(), StandardCharsets.UTF_8);
        System.out.println(answerText.replace("**", ""));
        System.out.println("report: " + runDir.resolve("report.md"));
        return 0;
    }

    private static int outputsSize(Map<Integer, WrkOutput> outputs) {
        return outputs.size();
    }
}
