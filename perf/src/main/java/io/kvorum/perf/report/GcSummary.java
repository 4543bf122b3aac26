package io.kvorum.perf.report;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * Stop-the-world pauses of one node, from its unified GC log ({@code -Xlog:gc*}): lines tagged
 * {@code [gc]} or {@code [gc,phases]} that name a "Pause" and end in a duration (G1, Parallel,
 * Serial, ZGC and Shenandoah all print them so).
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

    private static final Pattern USING = Pattern.compile("\\[gc(?:,init)?\\s*] Using (.+)$");
    private static final Pattern PAUSE =
            Pattern.compile("\\[(?:info|debug)]\\[gc(?:,phases)?\\s*] (GC\\(\\d+\\) .*Pause.*?) (\\d+(?:\\.\\d+)?)ms$");

    public static GcSummary parse(String log) {
        String collector = "unknown";
        List<Double> pauses = new ArrayList<>();
        List<String> longPauses = new ArrayList<>();
        for (String line : log.split("\\R")) {
            Matcher m = USING.matcher(line);
            if (m.find() && collector.equals("unknown")) {
                collector = m.group(1).trim();
                continue;
            }
            m = PAUSE.matcher(line);
            if (m.find()) {
                double ms = Double.parseDouble(m.group(2));
                pauses.add(ms);
                if (ms > LONG_PAUSE_MS) {
                    longPauses.add(line.substring(line.indexOf("GC(")).trim());
                }
            }
        }
        // Microsecond resolution, 3 significant digits: exact enough for a pause table.
        Histogram histogram = new Histogram(3);
        double total = 0;
        double max = 0;
        for (double ms : pauses) {
            histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
            total += ms;
            max = Math.max(max, ms);
        }
        double p99 = pauses.isEmpty() ? 0 : histogram.getValueAtPercentile(99) / 1000.0;
        return new GcSummary(collector, pauses.size(), total, max, Math.min(p99, max), List.copyOf(longPauses));
    }
}
