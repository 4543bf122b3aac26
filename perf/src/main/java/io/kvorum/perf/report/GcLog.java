package io.kvorum.perf.report;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One node's unified GC log ({@code -Xlog:gc*}), read once: the collector and every stop-the-world
 * pause, i.e. lines tagged {@code [gc]} or {@code [gc,phases]} that name a "Pause" and end in a
 * duration (G1 "Pause Young/Remark/Cleanup/Full", ZGC "Pause Mark Start/Mark End/Relocate Start";
 * Parallel, Serial and Shenandoah print them so too).
 *
 * <p>With the {@code time} decoration ({@code -Xlog:gc*:file=...:time,uptime,level,tags}, as
 * {@code LocalCluster} starts nodes) each pause has the wall-clock instant it was logged, which is
 * when it ended, so {@link #during} can keep the pauses of the measured run only. Logs written
 * without it (runs before that) give the whole-log summary only.
 *
 * @param collector from "Using G1" (tag gc or gc,init), or "unknown"
 * @param pauses    in log order
 */
public record GcLog(String collector, List<Pause> pauses) {

    /**
     * @param end  when the pause ended (the line's {@code time} decoration), or null without it
     * @param ms   its duration
     * @param text the line from "GC(n)" on, e.g. "GC(5) Pause Remark 10M->10M(1024M) 213.997ms"
     */
    public record Pause(Instant end, double ms, String text) {}

    private static final Pattern USING = Pattern.compile("\\[gc(?:,init)?\\s*] Using (.+)$");
    private static final Pattern PAUSE =
            Pattern.compile("\\[(?:info|debug)]\\[gc(?:,phases)?\\s*] (GC\\(\\d+\\) .*Pause.*?) (\\d+(?:\\.\\d+)?)ms$");
    /** The {@code time} (or {@code utctime}) decoration: [2026-11-22T10:15:00.123+0100]. */
    private static final Pattern TIME =
            Pattern.compile("^\\[(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?)(Z|[+-]\\d\\d:?\\d\\d)]");

    public static GcLog parse(String log) {
        String collector = "unknown";
        List<Pause> pauses = new ArrayList<>();
        for (String line : log.split("\\R")) {
            Matcher m = USING.matcher(line);
            if (m.find() && collector.equals("unknown")) {
                collector = m.group(1).trim();
                continue;
            }
            m = PAUSE.matcher(line);
            if (m.find()) {
                pauses.add(new Pause(time(line), Double.parseDouble(m.group(2)), line.substring(line.indexOf("GC(")).trim()));
            }
        }
        return new GcLog(collector, List.copyOf(pauses));
    }

    /** The wall-clock instant of a line's {@code time} decoration, or null when it has none. */
    static Instant time(String line) {
        Matcher m = TIME.matcher(line);
        if (!m.find()) {
            return null;
        }
        String offset = m.group(2);
        if (offset.length() == 5) { // +0100, as HotSpot prints it
            offset = offset.substring(0, 3) + ":" + offset.substring(3);
        }
        try {
            return OffsetDateTime.parse(m.group(1) + offset).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** True when every pause has its wall-clock time, so {@link #during} can answer (also true without pauses). */
    public boolean timed() {
        return pauses.stream().allMatch(p -> p.end() != null);
    }

    /** Every pause of the log: JVM start, preload, warm-up and measurement. */
    public GcSummary whole() {
        return GcSummary.of(collector, pauses.stream().map(p -> new GcSummary.Entry(p.ms(), p.text())).toList());
    }

    /**
     * The pauses that overlap {@code window} (a pause from {@code end - ms} to {@code end} that
     * stops the node for any part of the measured run counts), or null when the log has no time
     * decoration. Long pauses are listed with when they ended, in seconds from the window's start:
     * "at +12.345 s: GC(7) Pause Young ... 14.2ms".
     */
    public GcSummary during(Window window) {
        if (!timed()) {
            return null;
        }
        List<GcSummary.Entry> inside = new ArrayList<>();
        for (Pause p : pauses) {
            Instant start = p.end().minusNanos(Math.round(p.ms() * 1_000_000));
            if (!p.end().isBefore(window.start()) && !start.isAfter(window.end())) {
                double at = Duration.between(window.start(), p.end()).toNanos() / 1e9;
                inside.add(new GcSummary.Entry(p.ms(), String.format(Locale.ROOT, "at %+.3f s: %s", at, p.text())));
            }
        }
        return GcSummary.of(collector, inside);
    }

    /** The wall-clock instants the measured load run started and ended. */
    public record Window(Instant start, Instant end) {
        public Window {
            if (end.isBefore(start)) {
                throw new IllegalArgumentException("window ends before it starts: " + start + " .. " + end);
            }
        }

        public double seconds() {
            return Duration.between(start, end).toNanos() / 1e9;
        }
    }
}
