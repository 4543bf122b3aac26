package io.kvorum.perf.peers;

import java.util.List;

/**
 * When a warm-up may end: once the throughput of the last {@link #WINDOWS} consecutive windows of
 * the same load differs by no more than {@link #TOLERANCE} from their mean. A JVM's first minute
 * (JIT compilation, the heap's growth), Cassandra's first memtable flushes and compactions, and
 * etcd's first snapshot move throughput by far more than that.
 */
public final class SteadyState {

    /** Windows that must agree. */
    static final int WINDOWS = 3;
    /** Largest relative distance from their mean. */
    static final double TOLERANCE = 0.05;
    /** The rule in words, for option descriptions. */
    public static final String WINDOWS_TEXT = "the last " + WINDOWS + " windows' throughputs are within 5% of their mean";

    private SteadyState() {}

    /** Whether the last {@link #WINDOWS} windows' rates (requests/s, oldest first) agree. */
    public static boolean isSteady(List<Double> windowRates) {
        if (windowRates.size() < WINDOWS) {
            return false;
        }
        List<Double> last = windowRates.subList(windowRates.size() - WINDOWS, windowRates.size());
        double mean = last.stream().mapToDouble(Double::doubleValue).average().orElse(0);
        return mean > 0 && last.stream().allMatch(r -> Math.abs(r - mean) <= TOLERANCE * mean);
    }
}
