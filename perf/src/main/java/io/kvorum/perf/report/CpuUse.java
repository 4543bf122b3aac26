package io.kvorum.perf.report;

import java.util.Locale;
import java.util.Map;

/**
 * CPU time spent during one measured run ({@link CpuMeter}), in result.json.
 *
 * @param serverSeconds  the servers' CPU seconds (every node of the cluster; nginx and its workers)
 * @param machineSeconds every core's busy seconds, load tool included; NaN when unknown (not Linux)
 * @param windowSeconds  how long the measurement lasted (wall clock, load tool start to exit)
 * @param byServer       each server's CPU seconds by name ("n1", "nginx"), in the order measured;
 *                       null in results written before it was recorded
 */
public record CpuUse(double serverSeconds, double machineSeconds, double windowSeconds, Map<String, Double> byServer) {

    /** The servers' CPU time per request answered, in microseconds; NaN without requests. */
    public double serverMicrosPerRequest(long requests) {
        return requests <= 0 ? Double.NaN : serverSeconds * 1e6 / requests;
    }

    /** The machine's busy time per request answered, in microseconds; NaN when unknown. */
    public double machineMicrosPerRequest(long requests) {
        return requests <= 0 ? Double.NaN : machineSeconds * 1e6 / requests;
    }

    /** How many cores the servers kept busy on average. */
    public double serverCores() {
        return windowSeconds <= 0 ? Double.NaN : serverSeconds / windowSeconds;
    }

    /**
     * The report's sentence: "the servers used 1.23 cores, 17.5 µs of CPU per request; the machine
     * (load tool included) 28.1 µs per request".
     */
    public String summary(String servers, long requests) {
        String machine = Double.isNaN(machineSeconds) ? "the machine's busy time is unknown here"
                : String.format(Locale.ROOT, "the whole machine (load tool included) %.1f µs per request", machineMicrosPerRequest(requests));
        StringBuilder each = new StringBuilder();
        if (byServer != null && byServer.size() > 1 && windowSeconds > 0) {
            each.append(" (");
            byServer.forEach((name, seconds) -> each.append(each.length() > 2 ? ", " : "").append(name)
                    .append(String.format(Locale.ROOT, " %.2f", seconds / windowSeconds)));
            each.append(')');
        }
        return String.format(Locale.ROOT, "%s used %.2f cores%s, **%.1f µs of CPU per request**; %s", servers, serverCores(),
                each, serverMicrosPerRequest(requests), machine);
    }
}
