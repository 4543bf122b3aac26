package io.kvorum.perf.report;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * How long the servers' threads waited for a core during one measured run, by group of threads,
 * from the kernel's scheduler statistics of each thread ({@code /proc/<pid>/task/<tid>/schedstat}:
 * nanoseconds on a core, nanoseconds runnable but waiting in a run queue, and times it was given a
 * core).
 *
 * <p>Why: on a machine whose cores the load tool shares with the servers, a request's latency
 * beyond its CPU time is mostly threads that were ready and waited for a core: the event loop that
 * its bytes arrived for, the thread its work was handed to, the one that writes its answer. The
 * tail at a fixed rate follows those waits, and what moves them (fewer hand-offs, fewer threads,
 * less CPU per request) shows here before it shows in a percentile.
 *
 * <p>A group is the threads whose names differ only in a trailing number ({@code net-io-1} and
 * {@code net-io-2} are {@code net-io}), over a server's process and its descendants (nginx's workers).
 * A thread that started during the run counts from zero; one that exited takes its time with it.
 * Where the kernel keeps no such statistics (not Linux, or a kernel without them), nothing is read
 * and {@link #stop()} returns an empty map.
 */
public final class ThreadWaits {

    private static final Path PROC = Path.of("/proc");

    private final Map<String, Supplier<List<Long>>> servers;
    private final Path proc;
    private final Map<String, Map<String, ThreadSample>> start = new LinkedHashMap<>();

    private ThreadWaits(Map<String, Supplier<List<Long>>> servers, Path proc) {
        this.servers = servers;
        this.proc = proc;
        servers.forEach((name, pids) -> start.put(name, sample(pids.get())));
    }

    /** Starts reading the threads of {@code servers} (each with its descendants), by name in the order given. */
    public static ThreadWaits start(Map<String, ProcessHandle> servers) {
        Map<String, Supplier<List<Long>>> pids = new LinkedHashMap<>();
        servers.forEach((name, process) -> pids.put(name, () -> Stream.concat(Stream.of(process), process.descendants())
                .map(ProcessHandle::pid).toList()));
        return new ThreadWaits(pids, PROC);
    }

    /** {@link #start} over the processes {@code servers} name, read under {@code proc} (tests). */
    static ThreadWaits start(Map<String, Supplier<List<Long>>> servers, Path proc) {
        return new ThreadWaits(new LinkedHashMap<>(servers), proc);
    }

    /** Each server's groups of threads since {@link #start}, most CPU first; empty where nothing could be read. */
    public Map<String, List<ThreadGroupUse>> stop() {
        Map<String, List<ThreadGroupUse>> byServer = new LinkedHashMap<>();
        servers.forEach((name, pids) -> {
            Map<String, ThreadSample> before = start.get(name);
            Map<String, long[]> groups = new TreeMap<>();
            Map<String, Integer> threads = new TreeMap<>();
            sample(pids.get()).forEach((thread, now) -> {
                ThreadSample then = before.getOrDefault(thread, ThreadSample.ZERO);
                long[] sum = groups.computeIfAbsent(now.group(), g -> new long[3]);
                sum[0] += Math.max(0, now.runNanos() - then.runNanos());
                sum[1] += Math.max(0, now.waitNanos() - then.waitNanos());
                sum[2] += Math.max(0, now.scheduled() - then.scheduled());
                threads.merge(now.group(), 1, Integer::sum);
            });
            if (!groups.isEmpty()) {
                List<ThreadGroupUse> uses = new ArrayList<>();
                groups.forEach((group, sum) -> uses.add(new ThreadGroupUse(group, threads.get(group), sum[0] / 1e9, sum[1] / 1e9, sum[2])));
                uses.sort(Comparator.comparingDouble(ThreadGroupUse::cpuSeconds).reversed());
                byServer.put(name, uses);
            }
        });
        return byServer;
    }

    /** One reading of a thread: its group and its three counters. */
    record ThreadSample(String group, long runNanos, long waitNanos, long scheduled) {
        static final ThreadSample ZERO = new ThreadSample("", 0, 0, 0);
    }

    /** Every thread of {@code pids} that could be read, keyed by "pid/tid". */
    private Map<String, ThreadSample> sample(List<Long> pids) {
        Map<String, ThreadSample> threads = new LinkedHashMap<>();
        for (long pid : pids) {
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(proc.resolve(Long.toString(pid)).resolve("task"))) {
                for (Path task : tasks) {
                    ThreadSample s = read(task);
                    if (s != null) {
                        threads.put(pid + "/" + task.getFileName(), s);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the process ended, or this kernel keeps no such statistics: nothing to count for it
            }
        }
        return threads;
    }

    /** A thread's schedstat ("run wait scheduled") and name, or null when either cannot be read. */
    private static ThreadSample read(Path task) {
        try {
            String[] f = Files.readString(task.resolve("schedstat")).trim().split("\\s+");
            if (f.length < 3) {
                return null;
            }
            String name = Files.readString(task.resolve("comm")).trim();
            return new ThreadSample(groupOf(name), Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]));
        } catch (IOException | RuntimeException e) {
            return null; // exited between listing and reading
        }
    }

    /** A thread's group: its name without a trailing number and the separator before it. */
    static String groupOf(String threadName) {
        String group = threadName.replaceFirst("[-#_ ]?\\d+$", "").replaceFirst("[-#_ ]$", "");
        return group.isEmpty() ? threadName : group;
    }

    /**
     * The report's table for one server: a row for each of its {@code rows} busiest groups and one
     * for the rest, and the whole server's waits per request answered.
     */
    public static String markdown(String server, List<ThreadGroupUse> groups, long requests, int rows) {
        List<List<String>> table = new ArrayList<>();
        List<ThreadGroupUse> shown = groups.subList(0, Math.min(rows, groups.size()));
        shown.forEach(g -> table.add(row(g.name(), g)));
        if (groups.size() > shown.size()) {
            List<ThreadGroupUse> rest = groups.subList(shown.size(), groups.size());
            table.add(row("the other " + rest.size() + " groups", ThreadGroupUse.sum("", rest)));
        }
        ThreadGroupUse all = ThreadGroupUse.sum("", groups);
        table.add(row("**all**", all));
        String perRequest = requests <= 0 ? "" : String.format(Locale.ROOT,
                "Per request answered: %.1f µs on a core, %.1f µs waiting for one.%n%n",
                all.cpuSeconds() * 1e6 / requests, all.waitSeconds() * 1e6 / requests);
        return Markdown.table(List.of(server + " threads", "threads", "on a core", "waited for a core", "waited per second on a core",
                "times given a core", "mean wait"), table) + "\n" + perRequest;
    }

    private static List<String> row(String name, ThreadGroupUse g) {
        return List.of(name, Integer.toString(g.threads()), String.format(Locale.ROOT, "%.3f s", g.cpuSeconds()),
                String.format(Locale.ROOT, "%.3f s", g.waitSeconds()),
                g.cpuSeconds() > 0 ? String.format(Locale.ROOT, "%.2f s", g.waitSeconds() / g.cpuSeconds()) : "-",
                Markdown.count(g.scheduled()),
                g.scheduled() > 0 ? String.format(Locale.ROOT, "%.1f µs", g.waitSeconds() * 1e6 / g.scheduled()) : "-");
    }
}
