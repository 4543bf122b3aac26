package io.kvorum.perf;

import io.kvorum.perf.baseline.BaselineServer;
import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Workload;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.report.CpuMeter;
import io.kvorum.perf.report.CpuUse;
import io.kvorum.perf.report.GitInfo;
import io.kvorum.perf.report.LatencyPlot;
import io.kvorum.perf.report.MachineInfo;
import io.kvorum.perf.report.Markdown;
import io.kvorum.perf.report.RunResult;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A baseline run ({@code perf nginx}, {@code perf netty}): the same wrk (or wrk2) run as
 * {@code perf run} makes, against a server that answers every request 200 with a constant body,
 * into a run folder with the same result.json, so that {@code perf compare} puts it next to the
 * Kvorum runs of the same session. Subclasses say which server.
 */
abstract class BaselineCommand implements Callable<Integer> {

    @Option(names = "--rate", description = "Requests/s in total (required unless --saturation).")
    Integer rate;

    @Option(names = "--saturation", description = "Closed loop with Debian's wrk.")
    boolean saturation;

    @Option(names = "--body-bytes", description = "Size of the constant body (default ${DEFAULT-VALUE}, as perf run's values).",
            defaultValue = "256")
    int bodyBytes;

    @Option(names = "--workload", defaultValue = "get", converter = LoadOptions.WorkloadConverter.class,
            description = "get or put: the requests wrk sends, as perf run's (a put carries a --body-bytes value); "
                    + "the answer is the same constant body (default ${DEFAULT-VALUE}).")
    Workload workload;

    @Option(names = "--duration", defaultValue = "30s", converter = LoadOptions.DurationConverter.class,
            description = "Measured time (default ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--warmup", defaultValue = "5s", converter = LoadOptions.DurationConverter.class,
            description = "Same load before measuring, not recorded (default ${DEFAULT-VALUE}; 0s: none).")
    Duration warmup;

    @Option(names = "--connections", defaultValue = "64", description = "Connections (default ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--threads", defaultValue = "2", description = "Load generator threads (default ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--out", description = "Run folder (default perf/runs/<yyyyMMdd-HHmmss>-<label>).")
    Path out;

    @Option(names = "--label", description = "Name of this run (default <server>[-put]-<rate or saturation>).")
    String label;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** The server's name: the subcommand, the default label's prefix and result.json's workload. */
    abstract String server();

    /** What is wrong with the options every baseline takes, one problem named at a time, or empty. */
    private Optional<String> commonProblem() {
        if (rate == null && !saturation || rate != null && rate < 1) {
            return Optional.of("give --rate N (N > 0) or --saturation" + (rate != null ? ", not --rate " + rate : ""));
        }
        if (workload != Workload.GET && workload != Workload.PUT) {
            return Optional.of("--workload get or put: a constant answer has nothing to read back or delete, not "
                    + workload.name().toLowerCase(Locale.ROOT));
        }
        if (threads < 1 || connections < threads) {
            return Optional.of("--threads must be at least 1 and --connections at least --threads, got --threads "
                    + threads + " and --connections " + connections);
        }
        if (bodyBytes < 0) {
            return Optional.of("--body-bytes must be 0 or more, got " + bodyBytes);
        }
        return LoadOptions.timingProblem("--duration", duration, warmup);
    }

    /** What is wrong with the subcommand's own options, or empty. */
    Optional<String> invalidOptions() {
        return Optional.empty();
    }

    /** Why the server cannot run here (a missing binary), or empty. */
    abstract Optional<String> unavailable();

    /** Starts the server, its files in {@code runDir}, and returns once it answers. */
    abstract BaselineServer start(Path runDir) throws IOException;

    /** The report's line about the server, after its name: its command and what it answers. */
    abstract String describe(BaselineServer server);

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        String prefix = "kvorum perf " + server() + ": ";
        Optional<String> invalid = commonProblem().or(this::invalidOptions);
        if (invalid.isPresent()) {
            err.println(prefix + invalid.get());
            return 2;
        }
        Optional<LoadTool> tool = saturation ? LoadTool.findWrk(System.getenv()) : LoadTool.findWrk2(System.getenv());
        if (tool.isEmpty()) {
            err.println(prefix + (saturation ? LoadTool.WRK_MISSING : LoadTool.wrk2Missing(System.getenv())));
            return 2;
        }
        Optional<String> unavailable = unavailable();
        if (unavailable.isPresent()) {
            err.println(prefix + unavailable.get());
            return 2;
        }
        String name = label != null ? label : server() + (workload == Workload.PUT ? "-put-" : "-")
                + (saturation ? "saturation" : rate + "rps");
        Path runDir = RunFolder.create(out, name);
        String loadBefore = MachineInfo.loadAverage();
        LoadRunner runner = new LoadRunner(tool.get());
        Path scriptDir = Path.of("perf", "wrk").toAbsolutePath();
        WrkOutput output;
        LoadSpec load;
        String serverLine;
        CpuUse cpu;
        try (BaselineServer server = start(runDir)) {
            serverLine = describe(server);
            // get.lua / put.lua: /v0/entity?id=keyN, as perf run's workloads; the server answers every request alike
            load = new LoadSpec(workload, scriptDir, server.uri(), 100_000, workload == Workload.PUT ? bodyBytes : 0, null, null, 0, 0,
                    saturation ? 0 : rate, duration, connections, threads);
            if (!warmup.isZero()) {
                err.printf("warming up for %d s (not recorded) ...%n", warmup.toSeconds());
                runner.run(load.withDuration(warmup), runDir.resolve("warmup.txt"));
            }
            err.printf("measuring: %s%n", load.shellLine(runner.tool()));
            CpuMeter meter = CpuMeter.start(ProcessHandle.of(server.pid()).map(p -> Map.of(server(), p)).orElse(Map.of()));
            output = runner.run(load, runDir.resolve("wrk.txt"));
            cpu = meter.stop();
        }
        RunResult result = RunResult.of(name, saturation ? RunResult.CLOSED_LOOP : RunResult.FIXED_RATE, server(), 0,
                saturation ? 0 : rate, output, null, null, null, cpu);
        result.write(runDir.resolve("result.json"));
        Files.writeString(runDir.resolve("latency.svg"), LatencyPlot.svg("Latency by percentile: " + name, List.of(result.series())),
                StandardCharsets.UTF_8);
        MachineInfo machine = MachineInfo.current();
        String md = "# Kvorum perf " + server() + ": " + name + "\n\n"
                + "- date: " + ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME) + "\n"
                + "- commit: " + GitInfo.of(Path.of("")) + "\n"
                + "- command: `" + RunFolder.commandLine(spec.commandLine().getParseResult().originalArgs().toArray(String[]::new)) + "`\n"
                + "- mode: **" + result.mode() + "**\n"
                + "- machine: " + machine.cpus() + " CPUs (" + machine.cpuModel() + "), " + machine.memory() + ", kernel " + machine.kernel() + "\n"
                + "- load average before / after: " + loadBefore + " / " + MachineInfo.loadAverage() + "\n"
                + "- " + server() + ": " + serverLine + "\n"
                + "- load: `" + load.shellLine(runner.tool()) + "`\n"
                + "- CPU during the measured run: " + cpu.summary("the server", result.requests()) + "\n\n"
                + "| requested | achieved | errors | p50 | p90 | p99 | p99.9 | max |\n|---|---|---|---|---|---|---|---|\n"
                + "| " + (saturation ? "closed loop" : Markdown.count(rate) + "/s") + " | " + Markdown.count(result.achievedRate())
                + "/s | " + result.errors() + " | " + ms(result, "p50") + " | " + ms(result, "p90") + " | " + ms(result, "p99")
                + " | " + ms(result, "p99.9") + " | " + Markdown.ms(result.maxMs()) + " |\n\n![latency by percentile](latency.svg)\n\n"
                + cpu.threadsMarkdown(result.requests());
        Files.writeString(runDir.resolve("report.md"), md, StandardCharsets.UTF_8);
        System.out.printf("%s: %,.0f req/s achieved, p99 %s, errors %d%n", name, result.achievedRate(), ms(result, "p99"),
                result.errors());
        System.out.println("report: " + runDir.resolve("report.md"));
        return 0;
    }

    private static String ms(RunResult result, String percentile) {
        return Markdown.ms(result.percentilesMs().get(percentile));
    }
}
