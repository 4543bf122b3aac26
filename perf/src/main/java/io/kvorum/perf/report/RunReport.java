package io.kvorum.perf.report;

import io.kvorum.perf.load.WrkOutput;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Markdown report of one run ({@code report.md}): what was run, on what, and what came out.
 * Everything it shows is collected by the command into this record first, so the text is a pure
 * function of it.
 */
public record RunReport(String title, String date, GitInfo git, String perfCommand, List<String> nodeCommands,
                        String preloadSummary, String preloadCommand, String loadCommand, MachineInfo machine, String nodeJvm,
                        String heap, String loadBefore, String loadAfter, RunResult result, WrkOutput output, GcSummary gc, String profiler,
                        List<String> profileFiles, Map<String, String> nodeStatus, String extraSection) {

    public String markdown() {
        StringBuilder md = new StringBuilder("# ").append(title).append("\n\n");
        md.append("- date: ").append(date).append('\n');
        md.append("- commit: ").append(git).append('\n');
        md.append("- mode: **").append(result.mode()).append("**\n");
        md.append("- workload: ").append(result.workload()).append(", ").append(result.nodes()).append(" node(s), load sent to n1\n");
        md.append("- machine: ").append(machine.cpus()).append(" CPUs (").append(machine.cpuModel()).append("), ")
                .append(machine.memory()).append(", kernel ").append(machine.kernel()).append('\n');
        md.append("- node JVM: ").append(nodeJvm).append(", heap ").append(heap).append(", GC ")
                .append(gc == null ? "unknown" : gc.collector()).append('\n');
        md.append("- load average before / after: ").append(loadBefore).append(" / ").append(loadAfter)
                .append(" (shared machine: load generator and nodes share these CPUs)\n\n");

        md.append("## Throughput and errors\n\n");
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("requested", result.requestedRate() > 0 ? Markdown.count(result.requestedRate()) + " req/s" : "as fast as possible (closed loop)"));
        rows.add(List.of("achieved", Markdown.count(result.achievedRate()) + " req/s"));
        rows.add(List.of("requests", Markdown.count(result.requests()) + " in " + result.durationSeconds() + " s"));
        rows.add(List.of("transfer", output.transferPerSec() + "/s"));
        rows.add(List.of("errors", result.errors() + " (non-2xx " + output.non2xx() + ", socket " + output.socketErrors().total() + ")"));
        StringBuilder statuses = new StringBuilder();
        result.statusCounts().forEach((status, n) -> statuses.append(status).append(": ").append(Markdown.count(n)).append("  "));
        rows.add(List.of("answers by status", statuses.length() == 0 ? "(no kvorum-status line)" : statuses.toString().trim()));
        md.append(Markdown.table(List.of("", ""), rows)).append('\n');

        md.append("## Latency\n\n");
        List<String> header = new ArrayList<>();
        List<String> values = new ArrayList<>();
        for (double p : RunResult.PERCENTILES) {
            header.add(RunResult.percentileName(p));
            values.add(Markdown.ms(result.percentilesMs().get(RunResult.percentileName(p))));
        }
        header.add("max");
        values.add(Markdown.ms(result.maxMs()));
        md.append(Markdown.table(header, List.of(values))).append('\n');
        md.append("![latency by percentile](latency.svg)\n\n");

        md.append("## Profile of n1\n\n");
        md.append(profiler).append("\n\n");
        for (String file : profileFiles) {
            md.append("- [").append(file).append("](").append(file).append(")\n");
        }
        md.append('\n');

        md.append("## GC of n1\n\n");
        if (gc == null) {
            md.append("No GC log (the target was not started by this run).\n\n");
        } else {
            md.append(Markdown.table(List.of("collector", "pauses", "total", "max", "p99"), List.of(List.of(gc.collector(),
                    Integer.toString(gc.pauseCount()), Markdown.ms(gc.totalMs()), Markdown.ms(gc.maxMs()), Markdown.ms(gc.p99Ms())))));
            md.append("\nOver the whole run (start, preload, warm-up and measurement); see gc-n1.log.\n\n");
            if (!gc.longPauses().isEmpty()) {
                md.append("Pauses over ").append(GcSummary.LONG_PAUSE_MS).append(" ms:\n\n");
                gc.longPauses().forEach(p -> md.append("- `").append(p).append("`\n"));
                md.append('\n');
            }
        }
        if (extraSection != null && !extraSection.isEmpty()) {
            md.append(extraSection).append('\n');
        }

        md.append("## Nodes' /v0/status after the run\n\n");
        nodeStatus.forEach((node, body) -> md.append("**").append(node).append("**\n\n").append(Markdown.code(body)).append('\n'));

        md.append("## Commands\n\n");
        md.append("perf:\n\n").append(Markdown.code(perfCommand)).append('\n');
        md.append("preload (").append(preloadSummary).append("; output in `preload.txt`):\n\n")
                .append(Markdown.code(preloadCommand)).append('\n');
        md.append("load (measured run; the warm-up ran the same for its own duration):\n\n").append(Markdown.code(loadCommand)).append('\n');
        if (!nodeCommands.isEmpty()) {
            md.append("nodes (with `-XX:+AlwaysPreTouch`, so the heap's pages are touched at start, not during the measured run):\n\n")
                    .append(Markdown.code(String.join("\n", nodeCommands))).append('\n');
        }
        md.append("Raw output: `wrk.txt` (measured), `warmup.txt`; node logs `n*.log`, GC logs `gc-n*.log`.\n");
        return md.toString();
    }
}
