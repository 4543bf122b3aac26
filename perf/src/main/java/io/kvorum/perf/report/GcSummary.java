package io.kvorum.perf.report;

import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * Stop-the-world pauses of one node over some span: the whole GC log, or the measured run only
 * (see {@link GcLog}).
 *
 * @param collector    from "Using G1" (tag gc or gc,init), or "unknown"
 * @param pauseCount   number of pauses
 * @param totalMs      sum of pauses
 * @param maxMs        longest pause (0 without pauses)
 * @param p99Ms        99th percentile of pauses
 * @param longPauses   every pause over {@link #LONG_PAUSE_MS}, as logged
 */
public record GcSummary(String collector, int pauseCount, double totalMs, double maxMs, double p99Ms, List<String> longPauses) {

    public static final double LONG_PAUSE_MS = 10;

    /** One pause: its duration and how to list it when long. */
    record Entry(double ms, String text) {}

    /** Whole-log summary of a GC log, with or without the time decoration. */
    public static GcSummary parse(String log) {
        return GcLog.parse(log).whole();
    }

    static GcSummary of(String collector, List<Entry> pauses) {
        // Microsecond resolution, 3 significant digits: exact enough for a pause table.
        Histogram histogram = new Histogram(3);
        double total = 0;
        double max = 0;
        List<String> longPauses = pauses.stream().filter(p -> p.ms() > LONG_PAUSE_MS).map(Entry::text).toList();
        for (Entry p : pauses) {
            histogram.recordValue(Math.max(1, Math.round(p.ms() * 1000)));
            total += p.ms();
            max = Math.max(max, p.ms());
        }
        double p99 = pauses.isEmpty() ? 0 : histogram.getValueAtPercentile(99) / 1000.0;
        return new GcSummary(collector, pauses.size(), total, max, Math.min(p99, max), longPauses);
    }
}
