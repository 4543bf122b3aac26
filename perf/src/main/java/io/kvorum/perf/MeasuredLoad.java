package io.kvorum.perf;

import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.Preloader;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.report.MachineInfo;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What the commands that time a cluster-wide operation under a client load share ({@code perf
 * join}, {@code perf backup}): a load run beside the operation, its row in a report, and the
 * report's opening lines.
 */
final class MeasuredLoad {

    static final String LOAD_TABLE_HEAD = "| | requests/s | p50 | p99 | p99.9 | max | errors |\n|---|---|---|---|---|---|---|\n";

    private MeasuredLoad() {
    }

    /** Runs {@code load} on a thread of its own; its result completes when it has run its duration. */
    static CompletableFuture<WrkOutput> start(LoadRunner runner, LoadSpec load, Path output, String threadName) {
        CompletableFuture<WrkOutput> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(runner.run(load, output));
            } catch (IOException | InterruptedException | RuntimeException e) {
                result.completeExceptionally(e);
            }
        }, threadName);
        t.setDaemon(true);
        t.start();
        return result;
    }

    /** A row of {@link #LOAD_TABLE_HEAD}. */
    static String row(String when, WrkOutput w) {
        return String.format(Locale.ROOT, "| %s | %,.0f | %s | %s | %s | %.2f ms | %d |", when, w.requestsPerSec(),
                ms(w, 50), ms(w, 99), ms(w, 99.9), w.maxMs(), w.errors());
    }

    private static String ms(WrkOutput w, double p) {
        return w.latencyAt(p).isPresent() ? String.format(Locale.ROOT, "%.2f ms", w.latencyAt(p).getAsDouble()) : "n/a";
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
