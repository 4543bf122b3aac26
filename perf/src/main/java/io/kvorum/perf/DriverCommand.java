package io.kvorum.perf;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.RetryPolicy;
import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.driver.DriverLoad;
import io.kvorum.perf.driver.DriverOutput;
import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Workload;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.profile.AsyncProfiler;
import io.kvorum.perf.report.GcLog;
import io.kvorum.perf.report.GitInfo;
import io.kvorum.perf.report.LatencyPlot;
import io.kvorum.perf.report.MachineInfo;
import io.kvorum.perf.report.Markdown;
import io.kvorum.perf.report.NodeGc;
import io.kvorum.perf.report.RunResult;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvorum perf driver}: how many requests the Java driver ({@code io.kvorum.client}) pushes
 * from this one JVM, closed loop, against the cluster it starts, and, in the same session against
 * the same data, what Debian's wrk pushes: the driver's rate as a share of wrk's. Each of the two
 * gets its own folder ({@code driver/}, {@code wrk/}) with result.json and latency.svg, so
 * {@code perf compare} can put them side by side; report.md has both.
 */
@Command(name = "driver", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "The Java driver's throughput from this JVM (closed loop), and wrk's in the same session.")
final class DriverCommand implements Callable<Integer> {

    @Mixin
    LoadOptions options;

    @Option(names = "--in-flight", description = "Requests the driver keeps outstanding (default ${DEFAULT-VALUE}).",
            defaultValue = "64")
    int inFlight;

    @Option(names = "--pool", description = "Driver connections per node; requests pipeline on them (default ${DEFAULT-VALUE}).",
            defaultValue = "4")
    int pool;

    @Option(names = "--io-threads", description = "Driver event-loop threads (default ${DEFAULT-VALUE}).", defaultValue = "1")
    int ioThreads;

    @Option(names = "--route-to-replicas", description = "The driver reads the membership and sends each request to one of "
            + "its key's replicas (wrk still sends everything to n1).")
    boolean routeToReplicas;

    @Option(names = "--no-wrk", description = "Measure the driver only.")
    boolean noWrk;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        try {
            options.validate();
            if (options.workload == Workload.DELETE || options.skew != 0) {
                throw new IllegalArgumentException("the driver sends --workload put, get or mixed over uniform keys (no --skew)");
            }
            if (inFlight < 1 || pool < 1 || ioThreads < 1) {
                throw new IllegalArgumentException("--in-flight, --pool and --io-threads must be positive");
            }
        } catch (IllegalArgumentException e) {
            err.println("kvorum perf driver: " + e.getMessage());
            return 2;
        }
        var wrk = LoadTool.findWrk(System.getenv());
        if (wrk.isEmpty()) {
            err.println("kvorum perf driver: " + LoadTool.WRK_MISSING);
            return 2;
        }
        String label = options.label != null ? options.label : options.defaultLabel("driver");
        Path runDir = RunFolder.create(options.out, label);
        Path driverDir = Files.createDirectories(runDir.resolve("driver"));
        Path wrkDir = Files.createDirectories(runDir.resolve("wrk"));
        String loadBefore = MachineInfo.loadAverage();
        ClusterSecurity security = ClusterSecurity.create(runDir, options.tls, options.token);
        LoadTool securedWrk = wrk.get().withEnvironment(security.toolEnvironment());
        LoadRunner runner = new LoadRunner(securedWrk);
        Path scriptDir = Path.of("perf", "wrk").toAbsolutePath();
        DriverLoad.Spec load = new DriverLoad.Spec(options.workload, options.keys, options.valueBytes, options.readRatio,
                options.ack == null ? 0 : options.ack, options.from == null ? 0 : options.from, inFlight);
        Duration drain = Duration.ofSeconds(30);
        RunResult driverResult;
        RunResult wrkResult = null;
        String profile;
        List<NodeGc> driverGc;
        List<NodeGc> wrkGc = null;
        List<String> nodeCommands;
        String preload;
        LoadSpec wrkSpec;
        try (BenchmarkSession session = BenchmarkSession.open(options, security, securedWrk, scriptDir, runDir, err);
             KvorumClient client = client(session, security)) {
            DriverLoad driver = new DriverLoad(client, load);
            if (!options.warmup.isZero()) {
                err.printf("warming the driver up for %d s (not recorded) ...%n", options.warmup.toSeconds());
                driver.run(options.warmup, drain);
            }
            err.printf("measuring the driver: %s for %d s ...%n", load.describe(), options.duration.toSeconds());
            Set<AsyncProfiler.Event> events = options.profileEvents();
            AsyncProfiler profiler = events.isEmpty() ? null : AsyncProfiler.start(ProcessHandle.current().pid(), events, driverDir);
            Instant start = Instant.now();
            DriverLoad.Result measured;
            try {
                measured = driver.run(options.duration, drain);
            } finally {
                profile = profiler == null ? "Not profiled (--profile none)." : profileOf(profiler, events, driverDir);
            }
            GcLog.Window driverWindow = new GcLog.Window(start, Instant.now());
            driverGc = session.gc(driverWindow);
            driverResult = write(label + "-driver", RunResult.of(label + "-driver", "closed-loop, the Java driver from one JVM",
                    options.workload.name().toLowerCase(), options.nodes, 0, DriverOutput.of(measured), driverGc, driverWindow,
                    null, null), driverDir);
            if (!measured.failures().isEmpty()) {
                err.println("driver failures: " + measured.failures());
            }
            wrkSpec = options.loadSpec(session.target(), scriptDir, 0, options.duration);
            if (!noWrk) {
                session.warmUp(runner, wrkSpec);
                WrkOutput out = session.timedRun(runner, wrkSpec, wrkDir.resolve("wrk.txt"));
                wrkGc = session.gc(session.lastWindow());
                wrkResult = write(label + "-wrk", RunResult.of(label + "-wrk", RunResult.CLOSED_LOOP,
                        options.workload.name().toLowerCase(), options.nodes, 0, out, wrkGc, session.lastWindow(), null,
                        session.lastCpu()), wrkDir);
            }
            nodeCommands = session.nodeCommands();
            preload = session.preload().summary();
        }
        String report = report(label, load, driverResult, wrkResult, wrkSpec.shellLine(runner.tool()), nodeCommands, preload,
                profile, driverGc, wrkGc, loadBefore, security.describe());
        Files.writeString(runDir.resolve("report.md"), report, StandardCharsets.UTF_8);
        System.out.printf("%s: driver %,.0f req/s (p99 %s, failures %d)%s%n", label, driverResult.achievedRate(),
                Markdown.ms(driverResult.percentilesMs().get("p99")), driverResult.errors(),
                wrkResult == null ? "" : String.format(", wrk %,.0f req/s: driver/wrk = %.2f", wrkResult.achievedRate(),
                        driverResult.achievedRate() / wrkResult.achievedRate()));
        System.out.println("report: " + runDir.resolve("report.md"));
        return 0;
    }

    private KvorumClient client(BenchmarkSession session, ClusterSecurity security) throws IOException {
        KvorumClient.Builder builder = KvorumClient.builder().endpoints(session.target())
                .connectionsPerEndpoint(pool)
                .maxPendingPerConnection(Math.max(1, (inFlight + pool - 1) / pool) * 2)
                .ioThreads(ioThreads)
                .requestTimeout(Duration.ofSeconds(10))
                .retryPolicy(RetryPolicy.NONE);
        if (routeToReplicas) {
            builder.routeToReplicas();
        }
        if (security.tls()) {
            builder.trustCertificates(security.caFile());
        }
        if (security.tokens()) { // the token's file, made for the run; never printed
            builder.bearerToken(Files.readAllLines(security.tokenFile()).get(0).trim());
        }
        return builder.build();
    }

    private static RunResult write(String label, RunResult result, Path dir) throws IOException {
        result.write(dir.resolve("result.json"));
        Files.writeString(dir.resolve("latency.svg"), LatencyPlot.svg("Latency by percentile: " + label, List.of(result.series())),
                StandardCharsets.UTF_8);
        return result;
    }

    private static String profileOf(AsyncProfiler profiler, Set<AsyncProfiler.Event> events, Path dir) {
        try {
            Path jfr = profiler.stop();
            List<String> files = new ArrayList<>();
            for (Path f : AsyncProfiler.convert(jfr, events, dir, "driver")) {
                files.add("[" + f.getFileName() + "](driver/" + f.getFileName() + ")");
            }
            Files.deleteIfExists(jfr);
            return "async-profiler in this JVM (the driver's) during the measured run: " + String.join(", ", files) + ".";
        } catch (IOException | RuntimeException e) {
            return "Profiling the driver's JVM failed: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "Interrupted while converting the driver's profile.";
        }
    }

    private String report(String label, DriverLoad.Spec load, RunResult driver, RunResult wrk, String wrkLine,
                          List<String> nodeCommands, String preload, String profile, List<NodeGc> driverGc, List<NodeGc> wrkGc,
                          String loadBefore, String secured) {
        MachineInfo machine = MachineInfo.current();
        StringBuilder md = new StringBuilder("# Kvorum perf driver: ").append(label).append("\n\n");
        md.append("- date: ").append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME)).append('\n');
        md.append("- commit: ").append(GitInfo.of(Path.of(""))).append('\n');
        md.append("- command: `").append(RunFolder.commandLine(
                spec.commandLine().getParseResult().originalArgs().toArray(String[]::new))).append("`\n");
        md.append("- machine: ").append(machine.cpus()).append(" CPUs (").append(machine.cpuModel()).append("), ")
                .append(machine.memory()).append(", kernel ").append(machine.kernel()).append('\n');
        md.append("- this JVM (the driver's): ").append(RunCommand.nodeJvm()).append(", ")
                .append(Runtime.getRuntime().availableProcessors()).append(" processors, max heap ")
                .append(Runtime.getRuntime().maxMemory() >> 20).append(" MiB\n");
        md.append("- load average before / after: ").append(loadBefore).append(" / ").append(MachineInfo.loadAverage())
                .append(" (the driver, wrk and the nodes share these CPUs)\n");
        md.append("- security: ").append(secured).append(" (both the driver and wrk)\n");
        md.append("- preload: ").append(preload).append("\n\n");
        md.append("## Throughput, closed loop, ").append(options.duration.toSeconds()).append(" s each, same cluster and data\n\n");
        List<List<String>> rows = new ArrayList<>();
        rows.add(row("the Java driver (" + inFlight + " in flight, " + pool + " connections" + (routeToReplicas ? ", routed to replicas" : "")
                + ", " + ioThreads + " event loop" + (ioThreads == 1 ? "" : "s") + ")", driver));
        if (wrk != null) {
            rows.add(row("wrk (" + options.connections + " connections, " + options.threads + " threads)", wrk));
        }
        md.append(Markdown.table(List.of("", "req/s", "errors", "p50", "p99", "p99.9", "max"), rows)).append('\n');
        if (wrk != null) {
            md.append(String.format("**driver / wrk = %.2f**%n%n", driver.achievedRate() / wrk.achievedRate()));
        }
        md.append("Latencies of both are service times (closed loop, not corrected for coordinated omission). Plots: ")
                .append("[driver](driver/latency.svg)").append(wrk == null ? "" : ", [wrk](wrk/latency.svg)").append(".\n\n");
        md.append("## Commands\n\n");
        md.append("- the driver: ").append(load.describe()).append('\n');
        if (wrk != null) {
            md.append("- wrk: `").append(wrkLine).append("`\n");
        }
        for (String node : nodeCommands) {
            md.append("- node: `").append(node).append("`\n");
        }
        md.append("\n## GC of the nodes\n\n");
        md.append(gcLine("during the driver's run", driverGc)).append(gcLine("during wrk's run", wrkGc)).append('\n');
        md.append("## Profile\n\n").append(profile).append('\n');
        return md.toString();
    }

    private static List<String> row(String name, RunResult r) {
        return List.of(name, Markdown.count(r.achievedRate()), Long.toString(r.errors()), Markdown.ms(r.percentilesMs().get("p50")),
                Markdown.ms(r.percentilesMs().get("p99")), Markdown.ms(r.percentilesMs().get("p99.9")), Markdown.ms(r.maxMs()));
    }

    private static String gcLine(String when, List<NodeGc> gc) {
        if (gc == null || gc.isEmpty()) {
            return "";
        }
        StringBuilder line = new StringBuilder("- ").append(when).append(':');
        for (NodeGc n : gc) {
            line.append(' ').append(n.node()).append(' ').append(n.collector());
            if (n.measured() != null) {
                line.append(String.format(" %d pauses, max %.2f ms;", n.measured().pauseCount(), n.measured().maxMs()));
            }
        }
        return line.append('\n').toString();
    }
}
