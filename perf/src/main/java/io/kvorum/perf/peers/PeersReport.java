package io.kvorum.perf.peers;

import io.kvorum.perf.report.Markdown;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/** peers.md: Kvorum, Cassandra and etcd side by side, from what {@code perf peers} measured. */
public final class PeersReport {

    /** What every system was asked, the same for all. */
    public record Settings(int keys, int valueBytes, int inFlight, long rate, Duration duration, Duration warmupMax,
                           Duration warmupWindow, int maxOutstanding, String heap) {}

    /** One measured stretch and the CPU it took. */
    public record Phase(LoadResult load, ProcCpu.Window cpu) {}

    /**
     * The warm-up: the throughput of each window (requests/s, oldest first) and whether it ended
     * steady ({@link SteadyState}) or at --warmup.
     */
    public record Warmup(List<Double> windowRates, double seconds, boolean steady) {}

    /**
     * One system at one size. {@code failure} is the sentence saying why it stopped (then the later
     * phases are null), or null.
     */
    public record SystemRun(PeerSystem system, int nodes, List<String> commandLines, LoadResult preload, Warmup warmup,
                            Phase put, Phase get, Phase mixed, String failure) {}

    private PeersReport() {}

    public static String render(String commandLine, String machine, Settings s, List<SystemRun> runs) {
        StringBuilder md = new StringBuilder("# Kvorum perf peers\n\n");
        md.append("Command: `").append(commandLine).append("`\n\n");
        md.append("Machine: ").append(machine).append("\n\n");
        md.append(String.format(Locale.ROOT, "Each system alone on this machine, one after another, driven from one load "
                        + "generator JVM: %,d keys of %d random bytes preloaded, then a mixed load (half reads) at %d in flight "
                        + "until %d windows of %d s agreed within %.0f%% (at most %d s), then %d s of writes and %d s of reads "
                        + "at %d in flight (closed loop), then %d s of an open loop at %,d requests/s, half reads. Keys are "
                        + "uniform over the key space. Servers' heap: %s.%n%n",
                s.keys(), s.valueBytes(), s.inFlight(), SteadyState.WINDOWS, s.warmupWindow().toSeconds(),
                100 * SteadyState.TOLERANCE, s.warmupMax().toSeconds(), s.duration().toSeconds(), s.duration().toSeconds(),
                s.inFlight(), s.duration().toSeconds(), s.rate(), s.heap()));

        List<SystemRun> measured = runs.stream().filter(r -> r.mixed() != null).toList();
        md.append(String.format(Locale.ROOT, "## Throughput, closed loop at %d in flight%n%n", s.inFlight()));
        md.append("Latencies here are service times (a closed loop waits for the system): they say how busy it was, "
                + "not what a client at a given rate sees; the open loop below does.\n\n");
        md.append(Markdown.table(List.of("system", "nodes", "writes/s", "write p50", "write p99", "reads/s", "read p50",
                "read p99", "errors"), measured.stream().map(r -> List.of(r.system().title(), Integer.toString(r.nodes()),
                rate(r.put()), Markdown.ms(r.put().load().percentileMs(50)), Markdown.ms(r.put().load().percentileMs(99)),
                rate(r.get()), Markdown.ms(r.get().load().percentileMs(50)), Markdown.ms(r.get().load().percentileMs(99)),
                errors(r.put().load(), r.get().load()))).toList()));

        md.append(String.format(Locale.ROOT, "%n## Latency at %,d requests/s, half reads (open loop)%n%n", s.rate()));
        md.append(String.format(Locale.ROOT, "Each request's latency counts from when it was due (request i at start + i / "
                + "rate), not from when it was sent: a stall delays every request due during it, and the percentiles show "
                + "all of them (coordinated omission corrected, as wrk2 does). Two threads send, request i from thread "
                + "i mod 2. At most %,d requests are unanswered at once; beyond that the next one waits, its wait "
                + "counted.%n%n", s.maxOutstanding()));
        md.append(Markdown.table(List.of("system", "nodes", "achieved/s", "p50", "p99", "p99.9", "max", "errors"),
                measured.stream().map(r -> {
                    LoadResult m = r.mixed().load();
                    return List.of(r.system().title(), Integer.toString(r.nodes()), Markdown.count(m.requestsPerSec()),
                            Markdown.ms(m.percentileMs(50)), Markdown.ms(m.percentileMs(99)), Markdown.ms(m.percentileMs(99.9)),
                            Markdown.ms(m.maxMs()), errors(m));
                }).toList()));

        md.append("\n## CPU per request\n\n");
        md.append("The servers' CPU time (user + system of every node's process, from /proc/PID/stat at the start and the "
                + "end of each stretch) per request answered, and the load generator's (this JVM's) likewise. Cores = "
                + "CPU seconds / wall-clock seconds.\n\n");
        List<List<String>> cpuRows = new ArrayList<>();
        for (SystemRun r : measured) {
            cpuRows.add(cpuRow(r, "writes, closed loop", r.put()));
            cpuRows.add(cpuRow(r, "reads, closed loop", r.get()));
            cpuRows.add(cpuRow(r, String.format(Locale.ROOT, "%,d/s mixed, open loop", s.rate()), r.mixed()));
        }
        md.append(Markdown.table(List.of("system", "nodes", "load", "servers µs/request", "servers' cores",
                "client µs/request", "client cores"), cpuRows));

        boolean anyFailed = measured.stream().flatMap(r -> List.of(r.put(), r.get(), r.mixed()).stream())
                .anyMatch(p -> p.load().failureCount() > 0);
        if (anyFailed) {
            md.append("\n## Errors by kind\n\n");
            for (SystemRun r : measured) {
                appendErrors(md, r, "writes", r.put().load());
                appendErrors(md, r, "reads", r.get().load());
                appendErrors(md, r, "open loop", r.mixed().load());
            }
        }

        md.append("\n## Preload and warm-up\n\n");
        md.append(Markdown.table(List.of("system", "nodes", "preload", "warm-up windows (requests/s)", "warm-up ended"),
                runs.stream().filter(r -> r.preload() != null).map(r -> List.of(r.system().title(), Integer.toString(r.nodes()),
                        String.format(Locale.ROOT, "%,d keys in %.1f s, %d errors", r.preload().requests(),
                                r.preload().seconds(), r.preload().failureCount()),
                        r.warmup() == null ? "–" : r.warmup().windowRates().stream().map(Markdown::count)
                                .collect(Collectors.joining(", ")),
                        r.warmup() == null ? "–" : r.warmup().steady()
                                ? String.format(Locale.ROOT, "steady after %.0f s", r.warmup().seconds())
                                : String.format(Locale.ROOT, "**not steady** after %.0f s (--warmup)", r.warmup().seconds())))
                        .toList()));

        List<SystemRun> failed = runs.stream().filter(r -> r.failure() != null).toList();
        if (!failed.isEmpty()) {
            md.append("\n## Not measured\n\n");
            failed.forEach(r -> md.append("- ").append(r.system().title()).append(", ").append(r.nodes())
                    .append(r.nodes() == 1 ? " node: " : " nodes: ")
                    .append(r.failure().lines().findFirst().orElse("")).append(" (the whole message and the logs are in `")
                    .append(r.system().option()).append('-').append(r.nodes()).append("n/`)\n"));
        }

        md.append("\n## Durability: what an acknowledged write survives\n\n");
        Set<PeerSystem> systems = runs.stream().map(SystemRun::system).collect(Collectors.toCollection(LinkedHashSet::new));
        systems.forEach(sys -> md.append("- **").append(sys.title()).append("**: ").append(sys.durability()).append(".\n"));
        md.append("\nWith 1 node, each system keeps one replica and its quorum is that node.\n");

        md.append("\n## Settings\n\n").append(SETTINGS);
        md.append("\n## Command lines\n\n");
        if (systems.contains(PeerSystem.CASSANDRA)) {
            md.append("`$CASSANDRA_CLASSPATH` stands for the class path in `--cassandra-classpath`'s file "
                    + "(perf/target/cassandra.classpath by default).\n\n");
        }
        for (SystemRun r : runs) {
            md.append(r.system().title()).append(", ").append(r.nodes()).append(r.nodes() == 1 ? " node" : " nodes")
                    .append(":\n\n").append(Markdown.code(String.join("\n", r.commandLines())));
            md.append('\n');
        }
        return md.toString();
    }

    /**
     * Why each system runs as it does; perf/README.md ("Peers") has the same text for people who
     * have not run it.
     */
    static final String SETTINGS = """
            - **Kvorum**: `./kvorum perf`'s local cluster (ZGC, `-XX:+AlwaysPreTouch`, the heap above), replicas = \
            nodes, the node's default quorum; the Java driver with replica routing (each request to one of its \
            key's replicas), no retries, 10 s timeout. `Kvorum --fsync` adds only the node option `--fsync`.
            - **Cassandra 5.0.6** (`org.apache.cassandra:cassandra-all` from Maven Central, run as \
            `CassandraDaemon` with Java 17): one JVM per node on its own loopback address (127.0.0.1, .2, .3), \
            started one after another with `auto_bootstrap: false` (a new, empty cluster). cassandra.yaml is \
            5.0's defaults except: `num_tokens: 16` with `allocate_tokens_for_local_replication_factor: 3`, \
            SimpleSnitch, `concurrent_reads: 16` and `concurrent_writes: 16` (Cassandra's guidance: 16 x data \
            drives, 8 x cores, for one disk and 2 cores), `commitlog_sync: periodic` every 10 s (the default, \
            said again), no authentication. The JVM flags are those of 5.0's jvm-server.options and \
            jvm17-server.options (G1 with its settings, the module openings, jamm as agent), with -Xms = -Xmx = the \
            heap above and `-XX:+AlwaysPreTouch`, as Kvorum's; jemalloc preloaded where Debian's libjemalloc2 is \
            installed, as Cassandra's launcher does (the command lines below show `LD_PRELOAD` then). The machine's \
            `vm.max_map_count` and read-ahead stay as they are (Cassandra warns about both; the data fits in the \
            page cache). Table `kvorum_peers.kv (k blob PRIMARY KEY, v blob)`, \
            NetworkTopologyStrategy with RF = nodes, default compaction (size-tiered) and compression (LZ4). \
            Client: the Apache Cassandra Java driver 4.19 with prepared statements, token-aware routing (its \
            default for bound statements), consistency QUORUM, one connection per node, no retry of writes, 10 s \
            timeout.
            - **etcd 3.4** (Debian's `etcd-server`): one process per member on its own loopback ports, started \
            together; `--auto-compaction-mode=periodic --auto-compaction-retention=5m` (as Kubernetes compacts; \
            without it every overwrite is kept and a long run fills the backend), `--quota-backend-bytes` 8 GiB \
            (etcd's largest suggested size, so the space alarm never stops a run), `--logger=zap \
            --log-level=warn`; heartbeat, election timeout and snapshot count are the defaults. Client: jetcd \
            0.8.5 over all members (round robin), its default linearizable reads, 10 s timeout. etcd is a \
            consensus store, not a partitioned one: every member holds every key and every write goes through the \
            leader, so it is the reference for what strong consistency costs, not a like-for-like competitor.
            """;

    private static String rate(Phase p) {
        return Markdown.count(p.load().requestsPerSec());
    }

    private static String errors(LoadResult... results) {
        long n = 0;
        for (LoadResult r : results) {
            n += r.failureCount();
        }
        return Long.toString(n);
    }

    private static List<String> cpuRow(SystemRun r, String load, Phase p) {
        long requests = p.load().requests();
        return List.of(r.system().title(), Integer.toString(r.nodes()), load,
                String.format(Locale.ROOT, "%.1f", p.cpu().serverMicrosPerRequest(requests)),
                String.format(Locale.ROOT, "%.2f", p.cpu().serverCores()),
                String.format(Locale.ROOT, "%.1f", p.cpu().clientMicrosPerRequest(requests)),
                String.format(Locale.ROOT, "%.2f", p.cpu().clientCores()));
    }

    private static void appendErrors(StringBuilder md, SystemRun r, String what, LoadResult load) {
        if (load.failures().isEmpty()) {
            return;
        }
        md.append("- ").append(r.system().title()).append(", ").append(r.nodes()).append(r.nodes() == 1 ? " node, " : " nodes, ")
                .append(what).append(": ").append(load.failures().entrySet().stream()
                        .map(e -> String.format(Locale.ROOT, "%,d %s", e.getValue(), e.getKey()))
                        .collect(Collectors.joining(", "))).append('\n');
    }
}
