package io.kvorum.perf.report;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * CPU time spent during one measured run ({@link CpuMeter}), in result.json.
 *
 * @param serverSeconds  the servers' CPU seconds (every node of the cluster; nginx and its workers)
 * @param machineSeconds every core's busy seconds, load tool included; NaN when unknown (not Linux)
 * @param windowSeconds  how long the measurement lasted (wall clock, load tool start to exit)
 * @param byServer       each server's CPU seconds by name ("n1", "nginx"), in the order measured;
 *                       null in results written before it was recorded
 * @param threadsByServer each server's groups of threads, most CPU first ({@link ThreadWaits}); empty
 *                        where the kernel keeps no scheduler statistics, null in older results
 */
public record CpuUse(double serverSeconds, double machineSeconds, double windowSeconds, Map<String, Double> byServer,
                     Map<String, List<ThreadGroupUse>> threadsByServer) {

    /**
     * Over this share of the servers' CPU in the JIT compilers, a report says the run was not the
     * steady state. On the 2-core machine of perf/README.md (2026-11-27), runs after the default
     * warm-up took 0.6-4.1% (1 node at saturation under 1%), and 3-node runs whose window held the
     * first anti-entropy rounds 8.6-15.4%.
     */
    static final double COMPILING_NOTED = 0.07;

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
     * The report's sentence, "the nodes used 1.65 cores (n1 0.87, n2 0.39, n3 0.39), **54.1 µs of
     * CPU per request**; the whole machine (load tool included) 64.7 µs per request"; each
     * server's cores only when there are several.
     */
    public String summary(String servers, long requests) {
        String machine = Double.isNaN(machineSeconds) ? "the machine's busy time is unknown here"
                : String.format(Locale.ROOT, "the whole machine (load tool included) %.1f µs per request", machineMicrosPerRequest(requests));
        StringJoiner each = new StringJoiner(", ", " (", ")").setEmptyValue("");
        if (byServer != null && byServer.size() > 1 && windowSeconds > 0) {
            byServer.forEach((name, seconds) -> each.add(String.format(Locale.ROOT, "%s %.2f", name, seconds / windowSeconds)));
        }
        return String.format(Locale.ROOT, "%s used %.2f cores%s, **%.1f µs of CPU per request**; %s", servers, serverCores(),
                each, serverMicrosPerRequest(requests), machine);
    }

    /**
     * The report's section on waiting for a core: a table per server, or empty when no thread was
     * read (another kernel, an older result).
     */
    public String threadsMarkdown(long requests) {
        if (threadsByServer == null || threadsByServer.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder("## Waiting for a core\n\n")
                .append("Each server's threads during the measured run, by group: their time on a core, and their time ")
                .append("ready to run but waiting for one (the kernel's schedstat). The load tool shares these cores; a ")
                .append("request's latency beyond its CPU time is mostly such waits, of the threads it passes through.\n\n");
        if (isStillCompiling()) {
            StringJoiner each = new StringJoiner(", ");
            threadsByServer.forEach((server, groups) -> {
                double seconds = compilerSeconds(groups);
                if (seconds > 0) {
                    each.add(String.format(Locale.ROOT, "%s %.2f s", server, seconds));
                }
            });
            md.append(String.format(Locale.ROOT, "**Not the steady state:** the JIT compilers took %.1f%% of the servers' CPU "
                    + "during the measured run (%s): the servers were still compiling code that ran for the first time "
                    + "(a first anti-entropy round, say). A longer `--warmup` measures the steady state.%n%n",
                    100 * compilerShare(), each));
        }
        threadsByServer.forEach((server, groups) -> md.append(ThreadWaits.markdown(server, groups, requests, 8)));
        return md.toString();
    }

    /** Whether the JIT compilers took so much of the run ({@link #COMPILING_NOTED}) that it was not the steady state. */
    public boolean isStillCompiling() {
        return compilerShare() > COMPILING_NOTED;
    }

    /**
     * The share of the servers' threads' time on a core that the JVMs' JIT compiler threads took
     * (the kernel names them "C1 CompilerThre" and "C2 CompilerThre"); 0 when no thread was read.
     */
    public double compilerShare() {
        if (threadsByServer == null) {
            return 0;
        }
        double compiling = 0;
        double all = 0;
        for (List<ThreadGroupUse> groups : threadsByServer.values()) {
            compiling += compilerSeconds(groups);
            all += groups.stream().mapToDouble(ThreadGroupUse::cpuSeconds).sum();
        }
        return all > 0 ? compiling / all : 0;
    }

    private static double compilerSeconds(List<ThreadGroupUse> groups) {
        return groups.stream().filter(g -> g.name().contains("CompilerThre")).mapToDouble(ThreadGroupUse::cpuSeconds).sum();
    }
}
