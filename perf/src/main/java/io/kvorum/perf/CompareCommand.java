package io.kvorum.perf;

import com.google.gson.JsonParseException;
import io.kvorum.perf.report.FrameDiff;
import io.kvorum.perf.report.LatencyPlot;
import io.kvorum.perf.report.Markdown;
import io.kvorum.perf.report.RunResult;
import io.kvorum.perf.report.ThreadGroupComparison;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./kvorum perf compare RUN [RUN...]}: reads each run folder's result.json (and cpu.collapsed.gz,
 * or a plain cpu.collapsed of older runs)
 * and writes compare.md with a side-by-side table, one latency plot with every run, each server's
 * thread groups' CPU per request side by side, and the frames whose self-time share changed the
 * most from the first run.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "Side by side: table, one latency plot, each thread group's CPU per request, and the cpu frames that changed most (vs the first run).")
final class CompareCommand implements Callable<Integer> {

    /** The busiest thread groups of each server that the thread table shows, per run. */
    static final int THREAD_GROUPS_PER_SERVER = 6;

    @Parameters(arity = "1..*", paramLabel = "RUN", description = "Run folders (each with result.json); the first is the baseline.")
    List<Path> runs;

    @Option(names = "--out", description = "Output folder (default perf/runs/compare-<yyyyMMdd-HHmmss>).")
    Path out;

    @Option(names = "--top", description = "Frames to list (default ${DEFAULT-VALUE}).", defaultValue = "20")
    int top;

    @Override
    public Integer call() throws Exception {
        if (top < 1) {
            throw new UsageException("--top must be positive, got " + top);
        }
        if (runs.stream().map(r -> r.toAbsolutePath().normalize()).distinct().count() < runs.size()) {
            throw new UsageException("a run folder is named twice: compare runs of different builds or settings");
        }
        List<RunResult> results = new ArrayList<>();
        for (Path run : runs) {
            Path json = run.resolve("result.json");
            if (!Files.isRegularFile(json)) {
                System.err.println("kvorum perf compare: " + run + " has no result.json (is it a run folder?)");
                return 2;
            }
            try {
                results.add(RunResult.read(json));
            } catch (JsonParseException e) {
                throw new UsageException(json + " is not a run's result (" + e.getMessage() + ")");
            }
        }
        Path dir = RunFolder.create(out != null ? out : Path.of("perf", "runs",
                "compare-" + java.time.LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))), "compare");
        List<String> names = names(runs, results);
        List<LatencyPlot.Series> series = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            series.add(new LatencyPlot.Series(names.get(i), results.get(i).series().points()));
        }
        Files.writeString(dir.resolve("latency.svg"), LatencyPlot.svg("Latency by percentile", series), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("compare.md"), markdown(runs, results, top), StandardCharsets.UTF_8);
        System.out.println("compare: " + dir.resolve("compare.md"));
        return 0;
    }

    /** "put, 3 nodes"; for a baseline server, what it recorded as its workload; "–" for older runs without it. */
    static String workload(RunResult r) {
        String w = r.workload() == null || r.workload().isBlank() ? "–" : r.workload();
        return r.nodes() > 0 ? w + ", " + r.nodes() + (r.nodes() == 1 ? " node" : " nodes") : w;
    }

    /** n1's longest GC pause of the measured run, or of the whole run for older results, saying so. */
    static String gcMaxPause(RunResult r) {
        String ms = Markdown.ms(r.gcMaxPauseOfN1());
        return r.gcMeasuredKnown() || Double.isNaN(r.gcMaxPauseOfN1()) ? ms : ms + " (whole run)";
    }

    /** The servers' CPU time per request, "17.5 µs", or "–" when the run did not measure it. */
    static String cpuPerRequest(RunResult r) {
        double micros = r.serverCpuMicrosPerRequest();
        return Double.isNaN(micros) ? "–" : String.format(Locale.ROOT, "%.1f µs", micros);
    }

    /**
     * What each run is called in the report: its label, unless another run has the same label (two
     * builds or settings measured with the same workload, nodes and rate), then the label and its
     * folder's name, or the folder's path as given when those are alike too.
     */
    static List<String> names(List<Path> runs, List<RunResult> results) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            String label = results.get(i).label();
            Path folder = runs.get(i).toAbsolutePath().normalize().getFileName();
            boolean labelShared = false;
            boolean folderShared = false;
            for (int j = 0; j < runs.size(); j++) {
                if (j != i && Objects.equals(results.get(j).label(), label)) {
                    labelShared = true;
                    folderShared |= Objects.equals(runs.get(j).toAbsolutePath().normalize().getFileName(), folder);
                }
            }
            names.add(!labelShared ? label : label + " (" + (folderShared ? runs.get(i) : folder) + ")");
        }
        return names;
    }

    static String markdown(List<Path> runs, List<RunResult> results, int top) {
        List<String> names = names(runs, results);
        StringBuilder md = new StringBuilder("# Kvorum perf compare\n\n");
        md.append("- date: ").append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME)).append('\n');
        for (int i = 0; i < runs.size(); i++) {
            md.append("- ").append(names.get(i)).append(": `").append(runs.get(i)).append("`")
                    .append(i == 0 ? " (baseline)" : "").append('\n');
        }
        md.append('\n');
        List<List<String>> rows = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            RunResult r = results.get(i);
            rows.add(List.of(names.get(i), workload(r),
                    r.mode().startsWith("closed") ? "closed loop (not corrected)" : "fixed rate",
                    r.requestedRate() > 0 ? Markdown.count(r.requestedRate()) : "saturation", Markdown.count(r.achievedRate()),
                    Markdown.ms(r.percentilesMs().get("p50")), Markdown.ms(r.percentilesMs().get("p99")),
                    Markdown.ms(r.percentilesMs().get("p99.9")), Markdown.ms(r.maxMs()), Long.toString(r.errors()),
                    gcMaxPause(r), cpuPerRequest(r)));
        }
        md.append(Markdown.table(List.of("label", "workload", "mode", "rate", "achieved", "p50", "p99", "p99.9", "max", "errors", "GC max pause",
                "server CPU / request"), rows)).append('\n');
        md.append("GC max pause: the longest pause of n1 during the measured run; \"(whole run)\" marks an older run "
                + "whose GC log covers start, preload and warm-up too. Server CPU / request: the CPU time of every node "
                + "(or of the baseline server and its workers) during the measured run, divided by the requests answered; "
                + "at a fixed rate it shows what a change costs without the rate moving with it; on a shared machine it "
                + "still moves by several percent between runs.\n\n");
        md.append("![latency by percentile](latency.svg)\n\n");
        md.append(ThreadGroupComparison.markdown(names, results, THREAD_GROUPS_PER_SERVER));

        md.append("## Top frames that changed (self time, n1, vs ").append(names.get(0)).append(")\n\n");
        List<Map<String, Double>> shares = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            Path file = FrameDiff.find(runs.get(i), results.get(i).cpuCollapsed());
            if (file == null) {
                missing.add(names.get(i));
            } else {
                shares.add(FrameDiff.selfShares(file));
            }
        }
        if (!missing.isEmpty()) {
            md.append("No cpu profile for ").append(String.join(", ", missing)).append(", so no frame comparison.\n");
            return md.toString();
        }
        List<String> header = new ArrayList<>(List.of("frame"));
        header.addAll(names);
        header.add("change");
        List<List<String>> frameRows = new ArrayList<>();
        for (FrameDiff.Change c : FrameDiff.topChanges(shares, top)) {
            List<String> row = new ArrayList<>(List.of("`" + c.frame() + "`"));
            c.shares().forEach(s -> row.add(String.format(Locale.ROOT, "%.2f%%", 100 * s)));
            row.add(String.format(Locale.ROOT, "%+.2f pp", 100 * c.change()));
            frameRows.add(row);
        }
        md.append(Markdown.table(header, frameRows));
        md.append("\nShare of all cpu samples of n1 whose leaf is the frame; change is the largest move from the baseline "
                + "in percentage points. Runs of different rates spread differently over frames; compare like with like.\n");
        return md.toString();
    }
}
