package io.kvorum.perf.report;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GC of one node for the report: during the measured run (the figure the target is about) and over
 * its whole life (JVM start, preload, warm-up and measurement).
 *
 * @param node     "n1".."nN"
 * @param heap     the node's -Xmx ("1g"), or "?" when its command line has none
 * @param measured pauses overlapping the measured run, or null when unknown (a GC log without the
 *                 time decoration, or no window recorded)
 * @param whole    every pause of the log
 */
public record NodeGc(String node, String heap, GcSummary measured, GcSummary whole) {

    private static final Pattern XMX = Pattern.compile("(?:^|\\s)-Xmx(\\S+)");

    /** The node's GC from its log text, its command line and the measured window (null when unknown). */
    public static NodeGc of(String node, String commandLine, String gcLog, GcLog.Window window) {
        GcLog log = GcLog.parse(gcLog);
        return new NodeGc(node, heap(commandLine), window == null ? null : log.during(window), log.whole());
    }

    /** The last -Xmx of a java command line (the one the JVM uses), or "?". */
    static String heap(String commandLine) {
        Matcher m = XMX.matcher(commandLine);
        String heap = "?";
        while (m.find()) {
            heap = m.group(1);
        }
        return heap;
    }

    public String collector() {
        return whole.collector();
    }
}
