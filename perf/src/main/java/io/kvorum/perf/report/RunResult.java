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
 */
public record RunResult(String label, String mode, String workload, int nodes, int requestedRate, double achievedRate,
                        double durationSeconds, long requests, long errors, Map<Integer, Long> statusCounts,
                        long socketErrors, Map<String, Double> percentilesMs, double maxMs,
                        List<LatencyPlot.Point> spectrum, double gcMaxPauseMs, String cpuCollapsed) {

    public static final String FIXED_RATE = "fixed rate (wrk2, latency corrected for coordinated omission)";
    public static final String CLOSED_LOOP = "closed-loop, saturation, latency not corrected (wrk)";

    /** The percentiles of the report's table. */
    public static final double[] PERCENTILES = {50, 75, 90, 99, 99.9, 99.99};

    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().serializeSpecialFloatingPointValues().create();

    public static RunResult of(String label, String mode, String workload, int nodes, int requestedRate, WrkOutput out,
                               double gcMaxPauseMs, String cpuCollapsed) {
        Map<String, Double> percentiles = new LinkedHashMap<>();
        for (double p : PERCENTILES) {
            out.latencyAt(p).ifPresent(ms -> percentiles.put(percentileName(p), ms));
        }
        List<LatencyPlot.Point> spectrum = out.spectrum().isEmpty()
                ? out.percentiles().entrySet().stream().map(e -> new LatencyPlot.Point(e.getKey() / 100, e.getValue())).toList()
                : out.spectrum().stream().map(s -> new LatencyPlot.Point(s.percentile(), s.valueMs())).toList();
        return new RunResult(label, mode, workload, nodes, requestedRate, out.requestsPerSec(), out.durationSeconds(),
                out.requests(), out.errors(), out.statusCounts(), out.socketErrors().total(), percentiles, out.maxMs(),
                spectrum, gcMaxPauseMs, cpuCollapsed);
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
