package io.kvorum.perf.report;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.kvorum.perf.load.WrkOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The numbers of one measured run, as {@code result.json} in its folder: what compare reads back.
 *
 * @param mode          {@link #FIXED_RATE} or {@link #CLOSED_LOOP}
 * @param requestedRate requests/s asked of wrk2; 0 for closed loop
 * @param percentilesMs "p50" .. "p99.99" to ms (the ones the tool printed or its spectrum gives)
 * @param spectrum      (percentile 0..1, ms) points for the plot
 * @param gcMaxPauseMs  longest GC pause of n1 during the whole run (NaN when not known)
 * @param cpuCollapsed  collapsed cpu stacks of n1, relative to the run folder, or null
 * @param gcMeasured    each node's GC pauses during the measured run ("n1" first), or null when
 *                      unknown (a --url target, GC logs without the time decoration, older runs)
 * @param cpu           the CPU time the servers and the machine spent during the measured run, or
 *                      null when not measured (a --url target, the driver's run, older runs)
 */
public record RunResult(String label, String mode, String workload, int nodes, int requestedRate, double achievedRate,
                        double durationSeconds, long requests, long errors, Map<Integer, Long> statusCounts,
                        long socketErrors, Map<String, Double> percentilesMs, double maxMs,
                        List<LatencyPlot.Point> spectrum, double gcMaxPauseMs, String cpuCollapsed,
                        Map<String, MeasuredGc> gcMeasured, CpuUse cpu) {

    /**
     * One node's GC during the measured run, for result.json.
     *
     * @param windowSeconds how long the measured run lasted (wall clock, tool start to exit)
     * @param longPauses    pauses over 10 ms, "at +12.345 s: GC(7) Pause Young ... 14.2ms" (from the run's start)
     * @param wholeRunMaxMs longest pause over the node's whole GC log, for comparison
     */
    public record MeasuredGc(String collector, String heap, double windowSeconds, int pauseCount, double totalMs, double maxMs,
                             double p99Ms, List<String> longPauses, double wholeRunMaxMs) {}

    public static final String FIXED_RATE = "fixed rate (wrk2, latency corrected for coordinated omission)";
    public static final String CLOSED_LOOP = "closed-loop, saturation, latency not corrected (wrk)";

    /** The percentiles of the report's table. */
    public static final double[] PERCENTILES = {50, 75, 90, 99, 99.9, 99.99};

    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().serializeSpecialFloatingPointValues().create();

    /**
     * @param gc     each node's GC (n1 first), or null when there are no GC logs
     * @param window when the measured run ran, or null when unknown
     * @param cpu    what the servers spent during the measured run, or null when not measured
     */
    public static RunResult of(String label, String mode, String workload, int nodes, int requestedRate, WrkOutput out,
                               List<NodeGc> gc, GcLog.Window window, String cpuCollapsed, CpuUse cpu) {
        Map<String, Double> percentiles = new LinkedHashMap<>();
        for (double p : PERCENTILES) {
            out.latencyAt(p).ifPresent(ms -> percentiles.put(percentileName(p), ms));
        }
        List<LatencyPlot.Point> spectrum = out.spectrum().isEmpty()
                ? out.percentiles().entrySet().stream().map(e -> new LatencyPlot.Point(e.getKey() / 100, e.getValue())).toList()
                : out.spectrum().stream().map(s -> new LatencyPlot.Point(s.percentile(), s.valueMs())).toList();
        return new RunResult(label, mode, workload, nodes, requestedRate, out.requestsPerSec(), out.durationSeconds(),
                out.requests(), out.errors(), out.statusCounts(), out.socketErrors().total(), percentiles, out.maxMs(),
                spectrum, gc == null || gc.isEmpty() ? Double.NaN : gc.get(0).whole().maxMs(), cpuCollapsed, measured(gc, window),
                cpu);
    }

    private static Map<String, MeasuredGc> measured(List<NodeGc> gc, GcLog.Window window) {
        if (gc == null || window == null || gc.isEmpty() || gc.stream().anyMatch(n -> n.measured() == null)) {
            return null;
        }
        Map<String, MeasuredGc> measured = new LinkedHashMap<>();
        for (NodeGc n : gc) {
            GcSummary m = n.measured();
            measured.put(n.node(), new MeasuredGc(n.collector(), n.heap(), Math.round(window.seconds() * 1000) / 1000.0,
                    m.pauseCount(), m.totalMs(), m.maxMs(), m.p99Ms(), m.longPauses(), n.whole().maxMs()));
        }
        return measured;
    }

    /** The longest GC pause of n1 during the measured run when known, else over its whole run (older results). */
    public double gcMaxPauseOfN1() {
        MeasuredGc n1 = gcMeasured == null ? null : gcMeasured.get("n1");
        return n1 != null ? n1.maxMs() : gcMaxPauseMs;
    }

    /** True when {@link #gcMaxPauseOfN1} is of the measured run. */
    public boolean gcMeasuredKnown() {
        return gcMeasured != null && gcMeasured.containsKey("n1");
    }

    /** The servers' CPU microseconds per request answered in the measured run; NaN when not measured. */
    public double serverCpuMicrosPerRequest() {
        return cpu == null ? Double.NaN : cpu.serverMicrosPerRequest(requests);
    }

    /** "p50", "p99.9", "p99.99". */
    public static String percentileName(double p) {
        return "p" + (p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p));
    }

    public LatencyPlot.Series series() {
        return new LatencyPlot.Series(label, spectrum);
    }

    public void write(Path file) throws IOException {
        Files.writeString(file, GSON.toJson(this), StandardCharsets.UTF_8);
    }

    public static RunResult read(Path file) throws IOException {
        return GSON.fromJson(Files.readString(file, StandardCharsets.UTF_8), RunResult.class);
    }
}
