package io.kvorum.perf.report;

import io.kvorum.perf.load.WrkOutput;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
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
                        String heap, String loadBefore, String loadAfter, RunResult result, WrkOutput output, List<NodeGc> gc,
                        GcLog.Window measuredWindow, String profiler,
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
                .append(gc == null || gc.isEmpty() ? "unknown" : gc.get(0).collector()).append('\n');
        md.append("- load average before / after: ").append(loadBefore).append(" / ").append(loadAfter)
                .append(" (shared machine: load generator and nodes share these CPUs)\n\n");

        md.append("## Throughput and errors\n\n");
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("requested", result.requestedRate() > 0 ? Markdown.count(result.requestedRate()) + " req/s" : "as fast as possible (closed loop)"));
        rows.add(List.of("achieved", Markdown.count(result.achievedRate()) + " req/s"));
        rows.add(List.of("requests", Markdown.count(result.requests()) + " in " + result.durationSeconds() + " s"));
        rows.add(List.of("transfer", output.transferPerSec() + "/s"));
        if (result.cpu() != null) {
            rows.add(List.of("CPU", result.cpu().summary(result.nodes() == 1 ? "the node" : "the nodes", result.requests())));
        }
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
        if (result.cpu() != null) {
            md.append(result.cpu().threadsMarkdown(result.requests()));
        }

        md.append("## Profile of n1\n\n");
        md.append(profiler).append("\n\n");
        for (String file : profileFiles) {
            md.append("- [").append(file).append("](").append(file).append(")\n");
        }
        md.append('\n');

        md.append(gcSection());
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

    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    /**
     * Every node's pauses during the measured run (what the 10 ms target is about), then each
     * node's whole-run figures (JVM start, preload and warm-up included) as secondary information.
     */
    String gcSection() {
        StringBuilder md = new StringBuilder("## GC during the measured run\n\n");
        if (gc == null || gc.isEmpty()) {
            return md.append("No GC log (the target was not started by this run).\n\n").toString();
        }
        boolean known = measuredWindow != null && gc.stream().allMatch(n -> n.measured() != null);
        if (known) {
            ZoneId zone = ZoneId.systemDefault();
            md.append(String.format(java.util.Locale.ROOT, "Pauses that overlap the measured run, %s to %s (%.1f s, wall clock of the "
                            + "load tool's start and exit), by each node's `time`-decorated GC log.%n%n",
                    CLOCK.format(measuredWindow.start().atZone(zone)), CLOCK.format(measuredWindow.end().atZone(zone)),
                    measuredWindow.seconds()));
        } else {
            md.append("Measured window unknown: ").append(measuredWindow == null ? "no measured run was timed"
                    : "the GC logs have no `time` decoration (a node jar or perf tool older than that)")
                    .append(", so only the whole-run figures below.\n\n");
        }
        String over = "over " + Markdown.ms(GcSummary.LONG_PAUSE_MS);
        List<List<String>> rows = new ArrayList<>();
        for (NodeGc n : gc) {
            GcSummary m = n.measured();
            rows.add(m == null
                    ? List.of(n.node(), n.collector(), n.heap(), "?", "?", "?", "?", "?")
                    : List.of(n.node(), n.collector(), n.heap(), Integer.toString(m.pauseCount()), Markdown.ms(m.totalMs()),
                    Markdown.ms(m.maxMs()), Markdown.ms(m.p99Ms()), m.longPauses().isEmpty() ? "none" : Integer.toString(m.longPauses().size())));
        }
        md.append(Markdown.table(List.of("node", "collector", "heap (-Xmx)", "pauses", "total", "max", "p99", over), rows)).append('\n');
        if (known) {
            boolean any = false;
            for (NodeGc n : gc) {
                for (String p : n.measured().longPauses()) {
                    if (!any) {
                        md.append("Pauses ").append(over).append(" in the measured run (time from its start):\n\n");
                        any = true;
                    }
                    md.append("- ").append(n.node()).append(": `").append(p).append("`\n");
                }
            }
            md.append(any ? "\n" : "No pause " + over + " in the measured run.\n\n");
        }
        md.append("Whole run (JVM start, preload, warm-up and measurement; a cold JVM's first young GCs are here):\n\n");
        List<List<String>> whole = new ArrayList<>();
        for (NodeGc n : gc) {
            whole.add(List.of(n.node(), Integer.toString(n.whole().pauseCount()), Markdown.ms(n.whole().totalMs()),
                    Markdown.ms(n.whole().maxMs()), Integer.toString(n.whole().longPauses().size())));
        }
        md.append(Markdown.table(List.of("node", "pauses", "total", "max", over), whole));
        if (!known && gc.stream().anyMatch(n -> !n.whole().longPauses().isEmpty())) {
            md.append("\nPauses ").append(over).append(" over the whole run:\n\n");
            for (NodeGc n : gc) {
                n.whole().longPauses().forEach(p -> md.append("- ").append(n.node()).append(": `").append(p).append("`\n"));
            }
        }
        md.append("\nLogs: `gc-n*.log`.\n\n");
        return md.toString();
    }
}
