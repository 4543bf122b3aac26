package io.kvorum.perf.ycsb;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * What one YCSB phase measured, read from the text YCSB's {@code TextMeasurementsExporter}
 * prints on stdout: lines of {@code [SECTION], metric, value}.
 *
 * <pre>
 * [OVERALL], RunTime(ms), 5321
 * [OVERALL], Throughput(ops/sec), 3758.6
 * [READ], Operations, 9512
 * [READ], AverageLatency(us), 812.4
 * [READ], 95thPercentileLatency(us), 1511
 * [READ], 99.9PercentileLatency(us), 9871
 * [READ], Return=OK, 9512
 * [READ-FAILED], Operations, 3
 * </pre>
 *
 * Operations that failed are measured under {@code <OP>-FAILED}, and every outcome is counted
 * under the operation's own section as {@code Return=<STATUS>}. GC sections and YCSB's own
 * {@code CLEANUP} are left out. Latencies are in microseconds, as YCSB gives them.
 *
 * @param runtimeMs   the phase's wall time
 * @param throughput  operations per second over the phase
 * @param operations  per operation ({@code READ}, {@code UPDATE}, {@code READ-FAILED} ...), in
 *                    the order YCSB printed them
 */
public record YcsbOutput(long runtimeMs, double throughput, Map<String, Operation> operations) {

    /**
     * One operation's figures.
     *
     * @param percentilesUs by percentile as YCSB names it ({@code "50"}, {@code "95"}, {@code "99.9"})
     * @param returns       count by YCSB status name ({@code OK}, {@code NOT_FOUND}, {@code ERROR} ...)
     */
    public record Operation(long count, double averageUs, long minUs, long maxUs,
                            Map<String, Double> percentilesUs, Map<String, Long> returns) {

        /** How many ended with a status other than OK. */
        public long failures() {
            return returns.entrySet().stream().filter(e -> !e.getKey().equals("OK")).mapToLong(Map.Entry::getValue).sum();
        }

        public OptionalDouble percentileUs(String percentile) {
            Double v = percentilesUs.get(percentile);
            return v == null ? OptionalDouble.empty() : OptionalDouble.of(v);
        }
    }

    /** How many operations of this name were attempted: the successful and the failed ones. */
    public long attempted(String operation) {
        long ok = operations.containsKey(operation) ? operations.get(operation).count() : 0;
        long failed = operations.containsKey(operation + "-FAILED") ? operations.get(operation + "-FAILED").count() : 0;
        return ok + failed;
    }

    /** All operations' non-OK outcomes, by operation and status: {@code {"READ": {"NOT_FOUND": 3}}}. */
    public Map<String, Map<String, Long>> failuresByStatus() {
        Map<String, Map<String, Long>> failures = new LinkedHashMap<>();
        operations.forEach((name, op) -> op.returns().forEach((status, n) -> {
            if (!status.equals("OK") && n > 0) {
                failures.computeIfAbsent(name, k -> new LinkedHashMap<>()).put(status, n);
            }
        }));
        return failures;
    }

    /**
     * Parses YCSB's stdout.
     *
     * @throws IllegalArgumentException when it has no {@code [OVERALL]} throughput, that is, when
     *                                  YCSB did not finish the phase
     */
    public static YcsbOutput parse(List<String> lines) {
        long runtimeMs = -1;
        double throughput = Double.NaN;
        Map<String, Builder> ops = new LinkedHashMap<>();
        for (String line : lines) {
            if (!line.startsWith("[")) {
                continue;
            }
            int close = line.indexOf(']');
            if (close < 0) {
                continue;
            }
            String[] rest = line.substring(close + 1).split(",", 3);
            if (rest.length != 3 || !rest[0].isBlank()) {
                continue;
            }
            String section = line.substring(1, close);
            String metric = rest[1].trim();
            String value = rest[2].trim();
            if (section.equals("OVERALL")) {
                if (metric.equals("RunTime(ms)")) {
                    runtimeMs = (long) Double.parseDouble(value);
                } else if (metric.equals("Throughput(ops/sec)")) {
                    throughput = Double.parseDouble(value);
                }
            } else if (!section.startsWith("TOTAL_GC") && !section.startsWith("CLEANUP")) {
                ops.computeIfAbsent(section, s -> new Builder()).accept(metric, value);
            }
        }
        if (runtimeMs < 0 || Double.isNaN(throughput)) {
            throw new IllegalArgumentException("YCSB printed no [OVERALL] figures: the phase did not finish");
        }
        Map<String, Operation> operations = new LinkedHashMap<>();
        ops.forEach((name, b) -> operations.put(name, b.build()));
        return new YcsbOutput(runtimeMs, throughput, operations);
    }

    /** Collects one section's metrics; names are those of YCSB 0.17's HdrHistogram measurement. */
    private static final class Builder {
        long count;
        double average = Double.NaN;
        long min = -1;
        long max = -1;
        final Map<String, Double> percentiles = new LinkedHashMap<>();
        final Map<String, Long> returns = new LinkedHashMap<>();

        void accept(String metric, String value) {
            if (metric.equals("Operations")) {
                count = Long.parseLong(value);
            } else if (metric.equals("AverageLatency(us)")) {
                average = Double.parseDouble(value);
            } else if (metric.equals("MinLatency(us)")) {
                min = (long) Double.parseDouble(value);
            } else if (metric.equals("MaxLatency(us)")) {
                max = (long) Double.parseDouble(value);
            } else if (metric.startsWith("Return=")) {
                returns.put(metric.substring("Return=".length()), Long.parseLong(value));
            } else if (metric.endsWith("PercentileLatency(us)")) {
                // "95thPercentileLatency(us)" and "99.9PercentileLatency(us)": YCSB adds "th" to whole numbers only.
                String p = metric.substring(0, metric.length() - "PercentileLatency(us)".length());
                percentiles.put(p.endsWith("th") ? p.substring(0, p.length() - 2) : p, Double.parseDouble(value));
            }
        }

        Operation build() {
            return new Operation(count, average, min, max, Collections.unmodifiableMap(percentiles),
                    Collections.unmodifiableMap(returns));
        }
    }
}
