package io.kvorum.perf;

import io.kvorum.perf.cluster.LocalCluster;
import io.kvorum.perf.peers.CassandraPeer;
import io.kvorum.perf.peers.ClosedLoop;
import io.kvorum.perf.peers.EtcdPeer;
import io.kvorum.perf.peers.KeyValueTarget;
import io.kvorum.perf.peers.KvorumPeer;
import io.kvorum.perf.peers.LoadResult;
import io.kvorum.perf.peers.OpenLoop;
import io.kvorum.perf.peers.PeerCluster;
import io.kvorum.perf.peers.PeerSystem;
import io.kvorum.perf.peers.PeersReport;
import io.kvorum.perf.peers.ProcCpu;
import io.kvorum.perf.peers.Requests;
import io.kvorum.perf.peers.SteadyState;
import io.kvorum.perf.report.MachineInfo;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvorum perf peers}: Kvorum, Apache Cassandra 5.0 and etcd 3.4 side by side on this
 * machine, one system at a time, each driven by this JVM through its own Java client: preload,
 * warm-up until steady, closed-loop writes and reads at {@code --in-flight}, then an open loop at
 * {@code --rate} with latencies from each request's intended start; the servers' and the client's
 * CPU per request. Writes peers.md into the run folder, with every setting chosen for the peers.
 */
@Command(name = "peers", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "Kvorum, Cassandra 5.0 and etcd 3.4 side by side: throughput at a fixed number in flight, "
                + "latency at a fixed rate (coordinated omission corrected), CPU per request.")
final class PeersCommand implements Callable<Integer> {

    /** How long a preload may take before it is a failure. */
    private static final Duration PRELOAD_BOUND = Duration.ofMinutes(30);
    /** How long the answers of a stretch may take after its end. */
    private static final Duration DRAIN = Duration.ofSeconds(30);
    /** Requests the open loop keeps unanswered at most (OpenLoop). */
    static final int MAX_OUTSTANDING = 1024;
    /** Threads sending the open loop's requests: one per core of the machines perf/README.md measures on. */
    static final int SENDERS = 2;

    @Option(names = "--systems", split = ",", description = "Systems to measure, in this order: kvorum, kvorum-fsync, "
            + "cassandra, etcd (default ${DEFAULT-VALUE}).", defaultValue = "kvorum,kvorum-fsync,cassandra,etcd")
    List<String> systems;

    @Option(names = "--nodes", split = ",", description = "Cluster sizes, each system at each (replicas = nodes; "
            + "default ${DEFAULT-VALUE}).", defaultValue = "1,3")
    List<Integer> nodes;

    @Option(names = "--keys", description = "Keys preloaded, and the key space of the load (default ${DEFAULT-VALUE}).",
            defaultValue = "100000")
    int keys;

    @Option(names = "--value-bytes", description = "Value size (default ${DEFAULT-VALUE}).", defaultValue = "100")
    int valueBytes;

    @Option(names = "--in-flight", description = "Requests outstanding in the closed loops (default ${DEFAULT-VALUE}).",
            defaultValue = "128")
    int inFlight;

    @Option(names = "--rate", description = "Requests/s of the open loop, half reads (default ${DEFAULT-VALUE}).",
            defaultValue = "3000")
    long rate;

    @Option(names = "--duration", description = "Length of each measured stretch: writes, reads, open loop "
            + "(default ${DEFAULT-VALUE}).", defaultValue = "60s", converter = LoadOptions.DurationConverter.class)
    Duration duration;

    @Option(names = "--warmup", description = "Most time the mixed warm-up may take; it ends earlier once "
            + SteadyState.WINDOWS_TEXT + " (default ${DEFAULT-VALUE}; 0s: none).", defaultValue = "120s",
            converter = LoadOptions.DurationConverter.class)
    Duration warmup;

    @Option(names = "--warmup-window", description = "Length of each warm-up window compared (default ${DEFAULT-VALUE}).",
            defaultValue = "10s", converter = LoadOptions.DurationConverter.class)
    Duration warmupWindow;

    @Option(names = "--heap", description = "Heap of every server JVM, Kvorum's and Cassandra's (default ${DEFAULT-VALUE}).",
            defaultValue = "1g")
    String heap;

    @Option(names = "--jar", description = "Kvorum's node jar (default ${DEFAULT-VALUE}).",
            defaultValue = "node/target/kvorum-node.jar")
    Path jar;

    @Option(names = "--cassandra-classpath", description = "File holding Cassandra's class path, as Maven writes it; "
            + "./kvorum perf peers resolves it from perf/peers/cassandra/pom.xml (default ${DEFAULT-VALUE}).",
            defaultValue = "perf/target/cassandra.classpath")
    Path cassandraClasspath;

    @Option(names = "--etcd", description = "The etcd 3.4 binary (default: $KVORUM_ETCD, else etcd on the PATH; "
            + "./kvorum perf peers unpacks Debian's etcd-server when there is none).")
    String etcd;

    @Option(names = "--out", description = "Run folder (default perf/runs/<yyyyMMdd-HHmmss>-peers).")
    Path out;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        List<PeerSystem> chosen = chosenSystems();
        String problem = problem(chosen).orElse(null);
        if (problem != null) {
            throw new UsageException(problem);
        }
        String cassandra = chosen.contains(PeerSystem.CASSANDRA) ? readClasspath() : null;
        String etcdBinary = chosen.contains(PeerSystem.ETCD) ? etcdBinary().orElseThrow() : null;
        Path runDir = RunFolder.create(out, "peers");
        MachineInfo m = MachineInfo.current();
        String machine = String.format(Locale.ROOT, "%d cpus (%s), %s, kernel %s; load average before: %s", m.cpus(),
                m.cpuModel(), m.memory(), m.kernel(), MachineInfo.loadAverage());
        long ticksPerSecond = ProcCpu.ticksPerSecond();
        List<PeersReport.SystemRun> runs = new ArrayList<>();
        for (int n : new LinkedHashSet<>(nodes)) {
            for (PeerSystem system : chosen) {
                Path dir = runDir.resolve(system.option() + "-" + n + "n");
                err.printf("%s, %d node(s): starting (logs in %s) ...%n", system.title(), n, dir);
                PeersReport.SystemRun run = measure(system, n, dir, cassandra, etcdBinary, ticksPerSecond, err);
                runs.add(run);
                if (run.failure() != null) {
                    err.println(system.title() + ", " + n + " node(s): not measured: " + run.failure());
                }
            }
        }
        PeersReport.Settings settings = new PeersReport.Settings(keys, valueBytes, inFlight, rate, duration, warmup,
                warmupWindow, MAX_OUTSTANDING, heap);
        String commandLine = RunFolder.commandLine(spec.commandLine().getParseResult().originalArgs().toArray(String[]::new));
        Path report = runDir.resolve("peers.md");
        Files.writeString(report, PeersReport.render(commandLine, machine, settings, runs), StandardCharsets.UTF_8);
        err.println("report: " + report);
        return runs.stream().anyMatch(r -> r.failure() != null) ? 1 : 0;
    }

    private List<PeerSystem> chosenSystems() {
        List<PeerSystem> chosen = new ArrayList<>();
        for (String name : systems) {
            try {
                PeerSystem s = PeerSystem.of(name);
                if (!chosen.contains(s)) {
                    chosen.add(s);
                }
            } catch (IllegalArgumentException e) {
                throw new UsageException("--systems: " + e.getMessage());
            }
        }
        return chosen;
    }

    /** What is wrong with the options or missing on this machine, checked before anything starts; empty if nothing. */
    Optional<String> problem(List<PeerSystem> chosen) {
        if (chosen.isEmpty()) {
            return Optional.of("--systems names no system");
        }
        if (nodes.isEmpty() || nodes.stream().anyMatch(n -> n < 1 || n > 9)) {
            return Optional.of("--nodes takes cluster sizes from 1 to 9, got " + nodes);
        }
        if (keys < 1 || valueBytes < 1 || inFlight < 1) {
            return Optional.of("--keys, --value-bytes and --in-flight must be positive");
        }
        if (rate < 1) {
            return Optional.of("--rate must be positive, got " + rate);
        }
        Optional<String> timing = LoadOptions.timingProblem("--duration", duration, warmup);
        if (timing.isPresent()) {
            return timing;
        }
        if (warmupWindow.isNegative() || warmupWindow.isZero()) {
            return Optional.of("--warmup-window must be positive, got " + warmupWindow.toMillis() + " ms");
        }
        if (rate * duration.toMillis() / 1000 < 1) {
            return Optional.of("--rate x --duration schedules no request");
        }
        boolean kvorum = chosen.contains(PeerSystem.KVORUM) || chosen.contains(PeerSystem.KVORUM_FSYNC);
        if (kvorum && !Files.isRegularFile(jar)) {
            return Optional.of("node jar not found: " + jar + " (./kvorum perf builds it; or give --jar)");
        }
        if (chosen.contains(PeerSystem.CASSANDRA) && !Files.isRegularFile(cassandraClasspath)) {
            return Optional.of("Cassandra's class path " + cassandraClasspath + " is missing: ./kvorum perf peers resolves "
                    + "it (mvn -f perf/peers/cassandra/pom.xml dependency:build-classpath -Dmdep.outputFile=...), or leave "
                    + "cassandra out of --systems");
        }
        if (chosen.contains(PeerSystem.ETCD) && etcdBinary().isEmpty()) {
            return Optional.of("no etcd binary: give --etcd or KVORUM_ETCD, install Debian's etcd-server (apt-get install "
                    + "etcd-server), or run ./kvorum perf peers, which unpacks it; or leave etcd out of --systems");
        }
        return Optional.empty();
    }

    /** --etcd, else $KVORUM_ETCD, else etcd on the PATH, if it is an executable file. */
    Optional<String> etcdBinary() {
        return etcdBinary(etcd, System.getenv());
    }

    static Optional<String> etcdBinary(String option, Map<String, String> env) {
        String given = option != null ? option : env.get("KVORUM_ETCD");
        if (given != null && !given.isBlank()) {
            return Files.isExecutable(Path.of(given)) ? Optional.of(given) : Optional.empty();
        }
        for (String dir : env.getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "etcd"))) {
                return Optional.of(Path.of(dir, "etcd").toString());
            }
        }
        return Optional.empty();
    }

    private String readClasspath() throws IOException {
        String classpath = Files.readString(cassandraClasspath, StandardCharsets.UTF_8).strip();
        if (classpath.isEmpty() || !classpath.contains("cassandra-all-")) {
            throw new UsageException(cassandraClasspath + " holds no cassandra-all jar: delete it and run ./kvorum perf peers again");
        }
        return classpath;
    }

    private PeerCluster start(PeerSystem system, int n, Path dir, String cassandra, String etcdBinary)
            throws IOException, InterruptedException {
        return switch (system) {
            case KVORUM -> KvorumPeer.start(new LocalCluster.Spec(n, jar, heap, List.of(), List.of(), dir));
            case KVORUM_FSYNC -> KvorumPeer.start(new LocalCluster.Spec(n, jar, heap, List.of(), List.of("--fsync"), dir));
            case CASSANDRA -> CassandraPeer.start(n, cassandra, heap, dir);
            case ETCD -> EtcdPeer.start(n, etcdBinary, dir);
        };
    }

    /** One system at one size, from its start to its stop; a failure is a sentence in the result, not an exception. */
    private PeersReport.SystemRun measure(PeerSystem system, int n, Path dir, String cassandra, String etcdBinary,
                                          long ticksPerSecond, PrintStream err) throws InterruptedException {
        List<String> commandLines = List.of();
        LoadResult preload = null;
        PeersReport.Warmup warm = null;
        PeersReport.Phase put = null;
        PeersReport.Phase get = null;
        PeersReport.Phase mixed = null;
        String failure = null;
        try (PeerCluster cluster = start(system, n, dir, cassandra, etcdBinary)) {
            commandLines = cluster.commandLines();
            try (KeyValueTarget target = cluster.connect()) {
                Requests requests = new Requests(target, keys, valueBytes);
                err.printf("  preloading %,d keys of %d bytes ...%n", keys, valueBytes);
                preload = new ClosedLoop(inFlight).run(requests.preload(), PRELOAD_BOUND, DRAIN);
                err.printf("  preloaded in %.1f s, %d errors%n", preload.seconds(), preload.failureCount());
                warm = warmUp(requests, err);
                List<Long> pids = cluster.pids();
                put = phase(pids, ticksPerSecond, () -> new ClosedLoop(inFlight).run(requests.of(Requests.Mix.PUT), duration, DRAIN));
                err.printf("  writes: %,.0f/s, %d errors%n", put.load().requestsPerSec(), put.load().failureCount());
                get = phase(pids, ticksPerSecond, () -> new ClosedLoop(inFlight).run(requests.of(Requests.Mix.GET), duration, DRAIN));
                err.printf("  reads: %,.0f/s, %d errors%n", get.load().requestsPerSec(), get.load().failureCount());
                OpenLoop open = new OpenLoop(rate, duration, MAX_OUTSTANDING, DRAIN, SENDERS);
                mixed = phase(pids, ticksPerSecond, () -> open.run(requests.of(Requests.Mix.MIXED)));
                err.printf("  open loop at %,d/s: p99 %.2f ms, %d errors%n", rate, mixed.load().percentileMs(99),
                        mixed.load().failureCount());
            }
        } catch (IOException | RuntimeException e) {
            failure = e.getMessage() != null ? e.getMessage() : e.toString();
        }
        return new PeersReport.SystemRun(system, n, commandLines, preload, warm, put, get, mixed, failure);
    }

    /** A stretch of load that may be interrupted. */
    private interface Stretch {
        LoadResult run() throws InterruptedException;
    }

    private static PeersReport.Phase phase(List<Long> pids, long ticksPerSecond, Stretch stretch)
            throws IOException, InterruptedException {
        ProcCpu.Sample before = ProcCpu.Sample.now(pids);
        LoadResult load = stretch.run();
        ProcCpu.Sample after = ProcCpu.Sample.now(pids);
        return new PeersReport.Phase(load, ProcCpu.Window.between(before, after, ticksPerSecond));
    }

    /** Mixed load at --in-flight in windows of --warmup-window until steady or --warmup has passed; null for 0s. */
    private PeersReport.Warmup warmUp(Requests requests, PrintStream err) throws InterruptedException {
        if (warmup.isZero()) {
            return null;
        }
        List<Double> rates = new ArrayList<>();
        long start = System.nanoTime();
        Supplier<CompletableFuture<?>> mixed = requests.of(Requests.Mix.MIXED);
        while (true) {
            Duration left = warmup.minusNanos(System.nanoTime() - start);
            if (left.isNegative() || left.isZero()) {
                return new PeersReport.Warmup(rates, (System.nanoTime() - start) / 1e9, false);
            }
            Duration window = left.compareTo(warmupWindow) < 0 ? left : warmupWindow;
            rates.add(new ClosedLoop(inFlight).run(mixed, window, DRAIN).requestsPerSec());
            err.printf("  warm-up: %,.0f/s%n", rates.get(rates.size() - 1));
            if (SteadyState.isSteady(rates)) {
                return new PeersReport.Warmup(rates, (System.nanoTime() - start) / 1e9, true);
            }
        }
    }
}
