package io.kvorum.perf.ycsb;

import com.google.gson.GsonBuilder;
import io.kvorum.perf.report.GitInfo;
import io.kvorum.perf.report.MachineInfo;
import io.kvorum.perf.report.Markdown;
import io.kvorum.perf.ycsb.YcsbPhase.Outcome;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The record of one {@code ./kvorum perf ycsb} run: {@code report.md} for people and
 * {@code result.json} for tools, written from the same facts. Latencies are YCSB's (microseconds
 * in the JSON, milliseconds in the Markdown).
 */
final class YcsbReport {

    /**
     * What was asked for.
     *
     * @param target     what the load went to, in words ("3 local nodes ...", or the URLs given)
     * @param urls       the node URLs YCSB's threads spread over
     * @param quorum     "node defaults", or the ack/from given
     */
    record Settings(String target, List<String> urls, int records, int operations, int threads, int targetOpsPerSec,
                    String quorum) {}

    /**
     * Where it ran: the machine, the JVM of the nodes and of YCSB (this one's), and the load average
     * (1, 5, 15 min) before and after, since the machine is shared and the load says how much.
     */
    record Environment(MachineInfo machine, String jvm, String loadBefore, String loadAfter, GitInfo commit) {
        static String currentJvm() {
            return System.getProperty("java.vm.name") + " " + Runtime.version() + " (" + System.getProperty("java.vm.vendor") + ")";
        }
    }

    /** One workload's run; {@code records} is the record count YCSB was told (see YcsbCommand). */
    record WorkloadRun(Workload workload, long records, Outcome outcome) {}

    private final Instant started;
    private final Instant finished;
    private final String commandLine;
    private final Settings settings;
    private final Environment env;
    private final List<String> nodeCommands;
    private final Outcome load;
    private final List<WorkloadRun> workloads;

    YcsbReport(Instant started, Instant finished, String commandLine, Settings settings, Environment env,
               List<String> nodeCommands, Outcome load, List<WorkloadRun> workloads) {
        this.started = started;
        this.finished = finished;
        this.commandLine = commandLine;
        this.settings = settings;
        this.env = env;
        this.nodeCommands = List.copyOf(nodeCommands);
        this.load = load;
        this.workloads = List.copyOf(workloads);
    }

    void write(Path runDir) throws IOException {
        Files.writeString(runDir.resolve("report.md"), markdown(), StandardCharsets.UTF_8);
        Files.writeString(runDir.resolve("result.json"), json(), StandardCharsets.UTF_8);
    }

    String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# YCSB on Kvorum, ").append(local(started)).append("\n\n");
        md.append("YCSB ").append(ycsbVersion()).append(" core workloads ")
                .append(workloads.stream().map(w -> w.workload().name()).collect(Collectors.joining(", ")))
                .append(" (in that order, after one load) against ").append(settings.target())
                .append(", through the `io.kvorum.perf.ycsb.KvorumDB` binding. Run took ")
                .append(Math.round((finished.toEpochMilli() - started.toEpochMilli()) / 1000.0)).append(" s.\n\n");

        md.append("## Setup\n\n");
        md.append(table(List.of("", ""), List.of(
                List.of("target", settings.target()),
                List.of("records", count(settings.records()) + ", loaded once with workload A's load phase "
                        + "(10 fields of 100 bytes each, YCSB's default)"),
                List.of("operations", count(settings.operations()) + " per workload"),
                List.of("client threads", settings.threads() + ", spread round-robin over " + settings.urls().size()
                        + " node URL(s)"),
                List.of("rate", settings.targetOpsPerSec() > 0 ? "throttled to " + count(settings.targetOpsPerSec())
                        + " ops/s" : "unthrottled (closed loop: each thread sends its next request when the last answered)"),
                List.of("quorum", settings.quorum()),
                List.of("commit", env.commit().toString()))));

        md.append("\n## Machine\n\n");
        md.append(table(List.of("", ""), List.of(
                List.of("cores", Integer.toString(env.machine().cpus())),
                List.of("CPU", env.machine().cpuModel()),
                List.of("memory", env.machine().memory()),
                List.of("kernel", env.machine().kernel()),
                List.of("JVM (nodes and YCSB)", env.jvm()),
                List.of("load average before, after", env.loadBefore() + "; " + env.loadAfter()))));
        md.append("\nThe nodes and YCSB's client share these cores: every figure includes the client's cost.\n");

        md.append("\n## Summary\n\n");
        List<List<String>> rows = new ArrayList<>();
        for (WorkloadRun w : workloads) {
            Outcome o = w.outcome();
            if (o.succeeded()) {
                YcsbOutput out = o.output();
                rows.add(List.of(w.workload().name(), w.workload().description(), count(out.throughput()),
                        seconds(out.runtimeMs()), count(totalOperations(out)), failureSummary(out)));
            } else {
                rows.add(List.of(w.workload().name(), w.workload().description(), "failed", "", "", o.failure()));
            }
        }
        md.append(table(List.of("workload", "what", "throughput (ops/s)", "runtime (s)", "operations", "not OK"), rows));

        for (WorkloadRun w : workloads) {
            md.append("\n## Workload ").append(w.workload().name()).append(": ").append(w.workload().description())
                    .append("\n\n");
            phase(md, w.outcome(), w.records());
        }
        md.append("\n## Load\n\n");
        phase(md, load, settings.records());

        md.append("\n## Commands\n\n```sh\n").append(commandLine).append("\n");
        if (!nodeCommands.isEmpty()) {
            md.append("\n# the nodes it started\n");
            nodeCommands.forEach(c -> md.append(c).append('\n'));
        }
        md.append("\n# YCSB, one child JVM per phase, from the repository root\n");
        md.append(shellJoin(load.command())).append('\n');
        workloads.forEach(w -> md.append(shellJoin(w.outcome().command())).append('\n'));
        md.append("```\n");

        md.append("\n## How to read it\n\n");
        md.append("- Latencies are YCSB's: from the client thread's call into the binding to its return, from "
                + "YCSB's HdrHistogram measurement. `update` is a read and a write "
                + "(the binding merges fields), so it costs about one read more than a plain write. In F, "
                + "READ-MODIFY-WRITE is a read followed by an update, and its READ and UPDATE are also counted "
                + "under READ and UPDATE.\n");
        md.append("- `-FAILED` rows are the latencies of operations that did not return OK; \"not OK\" counts them by "
                + "status (NOT_FOUND, SERVICE_UNAVAILABLE for a 503, ERROR for anything else; the binding logs "
                + "the reasons in `workload?.log`).\n");
        md.append("- Workloads run in YCSB's documented order over one load, without reloading: D's inserted "
                + "records stay, and E is told the record count including them, so its scans and inserts "
                + "cover and extend the whole key space.\n");
        md.append("- Throttled runs (`--target`) report service time, not response time: YCSB does not correct "
                + "for coordinated omission here.\n");
        md.append("- Files: `load.txt`, `workload?.txt` (YCSB's measurements), `load.log`, `workload?.log` "
                + "(its progress and the binding's errors)" + (nodeCommands.isEmpty() ? "" : ", `n?.log` and `gc-n?.log` (the nodes)")
                + ", `result.json` (all of it, latencies in µs).\n");
        return md.toString();
    }

    private static void phase(StringBuilder md, Outcome o, long records) {
        if (!o.succeeded()) {
            md.append("**Failed:** ").append(o.failure()).append("\n");
            return;
        }
        YcsbOutput out = o.output();
        md.append("**").append(count(out.throughput())).append(" ops/s** over ").append(seconds(out.runtimeMs()))
                .append(" s; ").append(count(records)).append(" records at the start.\n\n");
        List<String> header = new ArrayList<>(List.of("operation", "count", "avg", "min"));
        List<String> percentiles = List.of(YcsbPhase.PERCENTILES.split(","));
        percentiles.forEach(p -> header.add("p" + p));
        header.add("max");
        List<List<String>> rows = new ArrayList<>();
        out.operations().forEach((name, op) -> {
            if (op.count() == 0) {
                return; // every one failed: its latencies are under <OP>-FAILED, its statuses below
            }
            List<String> row = new ArrayList<>(List.of(name, count(op.count()), ms(op.averageUs()), ms(op.minUs())));
            percentiles.forEach(p -> row.add(op.percentileUs(p).isPresent() ? ms(op.percentileUs(p).getAsDouble()) : ""));
            row.add(ms(op.maxUs()));
            rows.add(row);
        });
        md.append(table(header, rows)).append('\n');
        Map<String, Map<String, Long>> failures = out.failuresByStatus();
        if (failures.isEmpty()) {
            md.append("Every operation returned OK.\n");
        } else {
            md.append("Not OK: ").append(failures.entrySet().stream()
                    .map(e -> e.getKey() + " " + e.getValue().entrySet().stream()
                            .map(s -> s.getKey() + " " + count(s.getValue())).collect(Collectors.joining(", ")))
                    .collect(Collectors.joining("; "))).append(".\n");
        }
    }

    String json() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", "ycsb");
        root.put("started", started.toString());
        root.put("finished", finished.toString());
        root.put("command", commandLine);
        root.put("commit", env.commit().commit());
        root.put("dirty", env.commit().dirty());
        root.put("settings", settings);
        root.put("machine", env.machine());
        root.put("jvm", env.jvm());
        root.put("loadAverageBefore", env.loadBefore());
        root.put("loadAverageAfter", env.loadAfter());
        root.put("nodeCommands", nodeCommands);
        root.put("load", phaseJson(load, settings.records()));
        List<Map<String, Object>> ws = new ArrayList<>();
        for (WorkloadRun w : workloads) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("workload", w.workload().name());
            m.put("description", w.workload().description());
            m.putAll(phaseJson(w.outcome(), w.records()));
            ws.add(m);
        }
        root.put("workloads", ws);
        return new GsonBuilder().setPrettyPrinting().serializeSpecialFloatingPointValues().create().toJson(root) + "\n";
    }

    private static Map<String, Object> phaseJson(Outcome o, long records) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("records", records);
        m.put("succeeded", o.succeeded());
        if (!o.succeeded()) {
            m.put("failure", o.failure());
        } else {
            m.put("throughputOpsPerSec", o.output().throughput());
            m.put("runtimeMs", o.output().runtimeMs());
            m.put("operations", o.output().operations());
            m.put("notOk", o.output().failuresByStatus());
        }
        m.put("command", shellJoin(o.command()));
        m.put("stdout", o.stdout().getFileName().toString());
        m.put("stderr", o.stderr().getFileName().toString());
        return m;
    }

    /**
     * The operations YCSB ran, each counted once: a READ-MODIFY-WRITE also measures its read and its
     * update under READ and UPDATE, so those are taken off again.
     */
    static long totalOperations(YcsbOutput out) {
        long measured = 0;
        long readModifyWrites = 0;
        for (Map.Entry<String, YcsbOutput.Operation> e : out.operations().entrySet()) {
            if (e.getKey().equals("READ-MODIFY-WRITE")) {
                readModifyWrites += e.getValue().count();
            } else {
                measured += e.getValue().count();
            }
        }
        return measured - readModifyWrites;
    }

    private static String failureSummary(YcsbOutput out) {
        long n = out.failuresByStatus().values().stream().flatMap(m -> m.values().stream()).mapToLong(Long::longValue).sum();
        return n == 0 ? "0" : count(n);
    }

    private static String ycsbVersion() {
        Package p = site.ycsb.Client.class.getPackage();
        return p != null && p.getImplementationVersion() != null ? p.getImplementationVersion() : "0.17.0";
    }

    /** The words as one shell command line, quoting those the shell would split or expand. */
    static String shellJoin(List<String> words) {
        return words.stream()
                .map(w -> w.matches("[A-Za-z0-9_./:=,@%+-]+") ? w : "'" + w.replace("'", "'\\''") + "'")
                .collect(Collectors.joining(" "));
    }

    /** A latency YCSB gave in microseconds, as the other perf reports show latencies. */
    static String ms(double micros) {
        return Markdown.ms(micros / 1000.0);
    }

    private static String count(double n) {
        return Markdown.count(n);
    }

    private static String seconds(long ms) {
        return String.format(Locale.ROOT, "%.1f", ms / 1000.0);
    }

    private static String local(Instant t) {
        return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss z").withZone(ZoneId.systemDefault()).format(t);
    }

    private static String table(List<String> header, List<List<String>> rows) {
        return Markdown.table(header, rows);
    }
}
