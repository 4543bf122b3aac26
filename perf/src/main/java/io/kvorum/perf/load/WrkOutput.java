package io.kvorum.perf.load;

import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * What one wrk2 (or wrk) run printed, parsed. Latencies are in milliseconds.
 *
 * @param requests        completed requests ("N requests in D")
 * @param durationSeconds the measured duration wrk reports
 * @param requestsPerSec  achieved throughput
 * @param transferPerSec  as printed, e.g. "82.50KB"
 * @param socketErrors    connect + read + write + timeout (0 when wrk printed no such line)
 * @param non2xx          "Non-2xx or 3xx responses"
 * @param statusCounts    every answer status counted by the kvorum scripts (empty if the line is missing)
 * @param percentiles     percentile (e.g. 99.9) to latency, from "Latency Distribution"
 * @param spectrum        wrk2's "Detailed Percentile spectrum", empty for wrk
 * @param maxMs           the largest latency seen
 */
public record WrkOutput(long requests, double durationSeconds, double requestsPerSec, String transferPerSec,
                        SocketErrors socketErrors, long non2xx, Map<Integer, Long> statusCounts,
                        Map<Double, Double> percentiles, List<SpectrumPoint> spectrum, double maxMs) {

    public record SocketErrors(long connect, long read, long write, long timeout) {
        public static final SocketErrors NONE = new SocketErrors(0, 0, 0, 0);

        public long total() {
            return connect + read + write + timeout;
        }
    }

    /** One line of the spectrum: the latency at or below which {@code percentile} (0..1) of requests fell. */
    public record SpectrumPoint(double valueMs, double percentile, long totalCount) {}

    /** Answers that count as failures: non-2xx statuses plus socket errors. */
    public long errors() {
        return non2xx + socketErrors.total();
    }

    /**
     * The latency at percentile {@code p} (e.g. 99.9): from the printed distribution when it has
     * that percentile, else from the spectrum (first point at or above it).
     */
    public OptionalDouble latencyAt(double p) {
        Double printed = percentiles.get(p);
        if (printed != null) {
            return OptionalDouble.of(printed);
        }
        if (p >= 100) {
            return OptionalDouble.of(maxMs);
        }
        return spectrum.stream().filter(point -> point.percentile() * 100 >= p - 1e-9)
                .mapToDouble(SpectrumPoint::valueMs).findFirst();
    }
}
