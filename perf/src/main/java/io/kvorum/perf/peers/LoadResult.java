package io.kvorum.perf.peers;

import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.HdrHistogram.Histogram;

/**
 * One measured stretch of load.
 *
 * @param requests  requests answered or failed (not those still unanswered at the end of the drain)
 * @param seconds   how long the stretch lasted, from its first request to its last answer
 * @param failures  failed requests by kind ({@link #kindOf}), in name order
 * @param latencyNs every request's latency in nanoseconds, failures included: service time in a
 *                  closed loop, time from the request's intended start in an open loop
 */
public record LoadResult(long requests, double seconds, Map<String, Long> failures, Histogram latencyNs) {

    public double requestsPerSec() {
        return seconds <= 0 ? 0 : requests / seconds;
    }

    public long failureCount() {
        return failures.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Latency at a percentile, in milliseconds; NaN without requests. */
    public double percentileMs(double percentile) {
        return latencyNs.getTotalCount() == 0 ? Double.NaN : latencyNs.getValueAtPercentile(percentile) / 1e6;
    }

    public double maxMs() {
        return latencyNs.getTotalCount() == 0 ? Double.NaN : latencyNs.getMaxValue() / 1e6;
    }

    /**
     * The kind a failure is counted under: the simple class name of its cause, past the wrappers a
     * future adds ("DriverTimeoutException", "StatusRuntimeException: UNAVAILABLE" for gRPC's, which
     * carry their status first in the message).
     */
    public static String kindOf(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        String kind = cause.getClass().getSimpleName();
        if (kind.equals("StatusRuntimeException") || kind.equals("StatusException")) {
            String message = cause.getMessage() == null ? "" : cause.getMessage();
            int colon = message.indexOf(':');
            return kind + ": " + (colon > 0 ? message.substring(0, colon) : message);
        }
        return kind;
    }
}
