package io.kvorum.perf;

import io.kvorum.perf.cluster.LocalCluster;
import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Preloader;
import io.kvorum.perf.load.Workload;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.report.MachineInfo;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * The options and steps that the commands timing one cluster-wide operation on a preloaded local
 * cluster share ({@code perf join}, {@code perf backup}): the cluster and its keys, and an optional
 * wrk2 mixed load on n1 measured for {@code --load-duration} before the operation and again from
 * its start. A picocli mixin.
 */
final class MeasuredLoad {

    private static final String LOAD_TABLE_HEAD = "| | requests/s | p50 | p99 | p99.9 | max | errors |\n|---|---|---|---|---|---|---|\n";

    @Option(names = "--nodes", description = "Members, before a join (default ${DEFAULT-VALUE}).", defaultValue = "3")
    int nodes;

    @Option(names = "--keys", description = "Keys preloaded (default ${DEFAULT-VALUE}).", defaultValue = "1000000")
    long keys;

    @Option(names = "--value-bytes", description = "Value size (default ${DEFAULT-VALUE}).", defaultValue = "100")
    int valueBytes;

    @Option(names = "--jar", description = "Node jar (default ${DEFAULT-VALUE}).", defaultValue = "node/target/kvorum-node.jar")
    Path jar;

    @Option(names = "--heap", description = "Node heap (default ${DEFAULT-VALUE}).", defaultValue = "1g")
    String heap;

    @Option(names = "--out", description = "Run folder (default perf/runs/<yyyyMMdd-HHmmss>-<command>).")
    Path out;

    @Option(names = "--rate", description = "With wrk2: a mixed load (half gets) of this many requests/s on n1, "
            + "measured for --load-duration before the operation and again from its start (default: no load).")
    Integer rate;

    @Option(names = "--load-duration", description = "Length of each measured load (default ${DEFAULT-VALUE}).",
            defaultValue = "60s", converter = LoadOptions.DurationConverter.class)
    Duration loadDuration;

    @Option(names = "--warmup", description = "With --rate: the same load first, not recorded, so that the window before "
            + "the operation starts on a cluster past its first minutes (JIT, first anti-entropy rounds) (default ${DEFAULT-VALUE}).",
            defaultValue = "0s", converter = LoadOptions.DurationConverter.class)
    Duration warmup;

    /** Debian's wrk, for the preload; set by {@link #problem()}. */
    private LoadTool wrk;
    /** wrk2, for the measured load; present with {@code --rate}, once {@link #problem()} found it. */
    private Optional<LoadTool> wrk2 = Optional.empty();

    /** What was measured before the operation: the preload, and with --rate the load and its result. */
    record Before(Preloader.Result preload, LoadSpec load, WrkOutput output) {
    }

    /**
     * What is wrong with the options, or the load tool missing that they need, or empty; checked
     * before anything starts.
     */
    Optional<String> problem() {
        if (nodes < 1 || keys < 1 || valueBytes < 1) {
            return Optional.of("--nodes, --keys and --value-bytes must be positive");
        }
        if (rate != null && rate < 1) {
            return Optional.of("--rate must be positive, got " + rate);
        }
        Optional<String> timing = LoadOptions.timingProblem("--load-duration", loadDuration, warmup);
        if (timing.isPresent()) {
            return timing;
        }
        if (rate == null && !warmup.isZero()) {
            return Optional.of("--warmup is the client load before the measured one: it needs --rate");
        }
        wrk = LoadTool.findWrk(System.getenv()).orElse(null);
        if (wrk == null) {
            return Optional.of(LoadTool.WRK_MISSING);
        }
        wrk2 = rate == null ? Optional.empty() : LoadTool.findWrk2(System.getenv());
        if (rate != null && wrk2.isEmpty()) {
            return Optional.of(LoadTool.wrk2Missing(System.getenv()));
        }
        return Optional.empty();
    }

    /** The cluster to start: {@link #nodes} members (RF = members) with {@code nodeOptions}. */
    LocalCluster.Spec cluster(List<String> nodeOptions, Path runDir) {
        return new LocalCluster.Spec(nodes, jar, heap, List.of(), nodeOptions, runDir);
    }

    /**
     * Preloads the keys into {@code cluster}, then with {@code --rate} runs the load for
     * {@code --warmup} unrecorded and measures it for {@code --load-duration} ({@code beforeWhat}:
     * "before the join").
     */
    Before measureBefore(LocalCluster cluster, Path runDir, String beforeWhat, PrintStream err)
            throws IOException, InterruptedException {
        err.printf("preloading %,d keys of %d bytes ...%n", keys, valueBytes);
        Preloader.Result preload = new Preloader(wrk, scriptDir(), err)
                .preload(cluster.coordinator(), keys, valueBytes, "", runDir.resolve("preload.txt"));
        err.println("preloaded " + preload.summary());
        if (wrk2.isEmpty()) {
            return new Before(preload, null, null);
        }
        LoadSpec load = new LoadSpec(Workload.MIXED, scriptDir(), cluster.coordinator(), (int) Math.min(keys, Integer.MAX_VALUE),
                valueBytes, null, null, 0, 0.5, rate, loadDuration, 64, 1);
        if (!warmup.isZero()) {
            err.printf("warming up at %,d requests/s for %d s (not recorded) ...%n", rate, warmup.toSeconds());
            new LoadRunner(wrk2.get()).run(load.withDuration(warmup), runDir.resolve("load-warmup.txt"));
        }
        err.printf("measuring %,d requests/s for %d s %s ...%n", rate, loadDuration.toSeconds(), beforeWhat);
        return new Before(preload, load, new LoadRunner(wrk2.get()).run(load, runDir.resolve("load-before.txt")));
    }

    /**
     * Starts the load measured before on a thread of its own, beside the operation; its result
     * completes when it has run {@code --load-duration}. Null without {@code --rate}.
     */
    CompletableFuture<WrkOutput> startBeside(Before before, Path runDir, String threadName) {
        return startBeside(before, runDir, threadName, "load-during.txt");
    }

    /** {@link #startBeside(Before, Path, String)}, wrk2's output kept in {@code outputFile} of the run folder. */
    CompletableFuture<WrkOutput> startBeside(Before before, Path runDir, String threadName, String outputFile) {
        if (before.load() == null) {
            return null;
        }
        CompletableFuture<WrkOutput> result = new CompletableFuture<>();
        LoadRunner runner = new LoadRunner(wrk2.get());
        Thread t = new Thread(() -> {
            try {
                result.complete(runner.run(before.load(), runDir.resolve(outputFile)));
            } catch (IOException | InterruptedException | RuntimeException e) {
                result.completeExceptionally(e);
            }
        }, threadName);
        t.setDaemon(true);
        t.start();
        return result;
    }

    /**
     * Measures the load of {@code before} once more for {@code --load-duration}, with nothing else
     * started, wrk2's output kept in {@code outputFile} of the run folder.
     */
    WrkOutput measureAgain(Before before, Path runDir, String outputFile) throws IOException, InterruptedException {
        return new LoadRunner(wrk2.get()).run(before.load(), runDir.resolve(outputFile));
    }

    /** The report's part on the client load: its command line, then a row before and one beside the operation. */
    String loadSection(Before before, String beforeRow, WrkOutput beside, String besideRow) {
        return loadSection(before, List.of(row(beforeRow, before.output()), row(besideRow, beside)));
    }

    /** The report's part on the client load: its command line, then the given table rows ({@link #row}). */
    String loadSection(Before before, List<String> rows) {
        return String.format(Locale.ROOT, "Client load on n1, `%s`%s:%n%n", before.load().shellLine(wrk2.get()),
                warmup.isZero() ? ", from the end of the preload"
                        : String.format(Locale.ROOT, ", after %d s of it not recorded (--warmup)", warmup.toSeconds()))
                + LOAD_TABLE_HEAD + String.join("\n", rows) + "\n";
    }

    /** One row of the load table: what ran beside the load ({@code when}), and wrk2's figures. */
    static String row(String when, WrkOutput w) {
        return String.format(Locale.ROOT, "| %s | %,.0f | %s | %s | %s | %.2f ms | %d |", when, w.requestsPerSec(),
                ms(w, 50), ms(w, 99), ms(w, 99.9), w.maxMs(), w.errors());
    }

    private static String ms(WrkOutput w, double p) {
        return w.latencyAt(p).isPresent() ? String.format(Locale.ROOT, "%.2f ms", w.latencyAt(p).getAsDouble()) : "n/a";
    }

    private static Path scriptDir() {
        return Path.of("perf", "wrk").toAbsolutePath();
    }

    static double secondsSince(long nanoTime) {
        return (System.nanoTime() - nanoTime) / 1e9;
    }

    /** A report's title, the command that made it, the machine and the preload. */
    static StringBuilder reportHead(String title, CommandSpec spec, String loadBefore, Preloader.Result preload) {
        StringBuilder md = new StringBuilder("# ").append(title).append("\n\n");
        md.append("Command: `").append(RunFolder.commandLine(spec.commandLine().getParseResult().originalArgs()
                .toArray(String[]::new))).append("`\n\n");
        MachineInfo machine = MachineInfo.current();
        md.append("Machine: ").append(machine.cpus()).append(" cpus (").append(machine.cpuModel()).append("), ")
                .append(machine.memory()).append(", kernel ").append(machine.kernel()).append("; load average before: ")
                .append(loadBefore).append("\n\n");
        md.append("Preload: ").append(preload.summary()).append(" (`").append(preload.command()).append("`)\n\n");
        return md;
    }
}
