package io.kvorum.perf;

import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.cluster.LocalCluster;
import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Preloader;
import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.profile.AsyncProfiler;
import io.kvorum.perf.report.CpuMeter;
import io.kvorum.perf.report.CpuUse;
import io.kvorum.perf.report.GcLog;
import io.kvorum.perf.report.NodeGc;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The system under test for one run or search, from start to stop: a {@link LocalCluster} this
 * session starts (and always stops on close), or a node already running at --url. Holds what the
 * reports need about it: node command lines, status, GC log and which process to profile.
 */
final class BenchmarkSession implements AutoCloseable {

    /** What profiling one measured run produced: a sentence for the report and the files. */
    record Profile(String description, List<String> files) {}

    private final LoadOptions options;
    private final ClusterSecurity security;
    private final Path runDir;
    private final LocalCluster cluster;
    private final URI target;
    private final PrintStream log;
    private Preloader.Result preload;
    private GcLog.Window lastWindow;
    private CpuUse lastCpu;

    private BenchmarkSession(LoadOptions options, ClusterSecurity security, Path runDir, LocalCluster cluster, URI target,
                             PrintStream log) {
        this.options = options;
        this.security = security;
        this.runDir = runDir;
        this.cluster = cluster;
        this.target = target;
        this.log = log;
    }

    /** Starts the cluster (unless --url) and preloads every key of the key space with {@code tool}. */
    static BenchmarkSession open(LoadOptions options, ClusterSecurity security, LoadTool tool, Path scriptDir,
                                 Path runDir, PrintStream log) throws IOException, InterruptedException {
        LocalCluster cluster = null;
        URI target = options.url;
        if (target == null) {
            log.printf("starting %d node(s) from %s (security: %s) ...%n", options.nodes, options.jar, security);
            cluster = LocalCluster.start(new LocalCluster.Spec(options.nodes, options.jar, options.heap,
                    options.nodeJvmOptions, options.nodeOptions, runDir), security);
            target = cluster.coordinator();
        }
        BenchmarkSession session = new BenchmarkSession(options, security, runDir, cluster, target, log);
        try {
            log.printf("preloading %,d keys of %d bytes into %s with %s ...%n", options.keys, options.valueBytes, target, tool.name());
            session.preload = new Preloader(tool, scriptDir, log).preload(target, options.keys, options.valueBytes, "",
                    runDir.resolve("preload.txt"));
            log.println("preloaded " + session.preload.summary());
            return session;
        } catch (IOException | InterruptedException | RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /** How the cluster is secured, for the tools that talk to it. */
    ClusterSecurity security() {
        return security;
    }

    URI target() {
        return target;
    }

    /** How the keys were preloaded: "200,000 keys in 7.9 s, 25,316 keys/s" and the tool's command line. */
    Preloader.Result preload() {
        return preload;
    }

    List<String> nodeCommands() {
        return cluster == null ? List.of() : cluster.commandLines();
    }

    /** Runs the load unprofiled for the warm-up duration (JIT, caches); its output goes to warmup.txt. */
    void warmUp(LoadRunner runner, LoadSpec spec) throws IOException, InterruptedException {
        if (options.warmup.isZero()) {
            return;
        }
        log.printf("warming up for %d s (not recorded) ...%n", options.warmup.toSeconds());
        WrkOutput warm = runner.run(spec.withDuration(options.warmup), runDir.resolve("warmup.txt"));
        if (warm.errors() > 0) {
            // Not a failure of the run: overload at saturation answers 503 by design. But a warm-up
            // that failed may have left the nodes cold, so the measured run is read with that in mind.
            log.printf("warm-up: %,d of %,d requests failed (non-2xx %,d, socket errors %,d; statuses %s): the "
                            + "measured run may not start warm (warmup.txt)%n", warm.errors(), warm.requests(),
                    warm.non2xx(), warm.socketErrors().total(), warm.statusCounts());
        }
    }

    /**
     * Runs {@code spec}, with async-profiler in n1 (or --pid) when events are given. A profiler that
     * cannot attach or convert does not fail the run: the report says why there is no profile.
     */
    WrkOutput measure(LoadRunner runner, LoadSpec spec, Path output, Set<AsyncProfiler.Event> events,
                      List<Profile> profileOut) throws IOException, InterruptedException {
        Long pid = cluster != null ? Long.valueOf(cluster.pid("n1")) : options.pid;
        AsyncProfiler profiler = null;
        String problem = null;
        if (events.isEmpty()) {
            problem = "Not profiled (--profile none).";
        } else if (pid == null) {
            problem = "Not profiled: the target was given by --url without --pid.";
        } else {
            try {
                profiler = AsyncProfiler.start(pid, events, runDir);
            } catch (IOException | RuntimeException e) {
                problem = "Not profiled: async-profiler could not start in pid " + pid + ": " + e.getMessage();
            }
        }
        Map<String, AsyncProfiler> others = profiler != null && options.profileAllNodes && cluster != null
                ? startOthers(events) : Map.of();
        log.printf("measuring: %s%n", spec.shellLine(runner.tool()));
        WrkOutput out;
        try {
            out = timedRun(runner, spec, output);
        } finally {
            if (profiler != null) {
                Path jfr = profiler.stop();
                Profile n1 = convert(jfr, events, pid, runDir, "n1");
                StringBuilder description = new StringBuilder(n1.description());
                for (Map.Entry<String, AsyncProfiler> other : others.entrySet()) {
                    String id = other.getKey();
                    Profile p = convert(other.getValue().stop(), events, cluster.pid(id), runDir.resolve(id), id);
                    description.append("\n\n").append(p.description());
                    for (String file : p.files()) {
                        description.append(file.endsWith(".html") ? " [" + id + "/" + file + "](" + id + "/" + file + ")" : "");
                    }
                }
                profileOut.add(new Profile(description.toString(), n1.files()));
            }
        }
        if (problem != null) {
            profileOut.add(new Profile(problem, List.of()));
        }
        return out;
    }

    /** Profilers in every node but n1, each recording into its own subfolder; a node that refuses is left out. */
    private Map<String, AsyncProfiler> startOthers(Set<AsyncProfiler.Event> events) throws IOException {
        Map<String, AsyncProfiler> others = new LinkedHashMap<>();
        for (String id : cluster.ids()) {
            if (!id.equals("n1")) {
                try {
                    others.put(id, AsyncProfiler.start(cluster.pid(id), events, Files.createDirectories(runDir.resolve(id))));
                } catch (IOException | RuntimeException e) {
                    log.printf("not profiling %s: %s%n", id, e.getMessage());
                }
            }
        }
        return others;
    }

    /**
     * Runs {@code spec} as a measured run (a step of search, or within {@link #measure}) and records
     * the wall-clock instants it ran between, the window whose GC pauses the report shows, and the
     * CPU time the nodes spent meanwhile.
     */
    WrkOutput timedRun(LoadRunner runner, LoadSpec spec, Path output) throws IOException, InterruptedException {
        CpuMeter cpu = null;
        if (cluster != null) {
            Map<String, ProcessHandle> nodes = new LinkedHashMap<>();
            cluster.ids().forEach(id -> ProcessHandle.of(cluster.pid(id)).ifPresent(p -> nodes.put(id, p)));
            cpu = CpuMeter.start(nodes);
        }
        Instant start = Instant.now();
        WrkOutput out = runner.run(spec, output);
        lastWindow = new GcLog.Window(start, Instant.now());
        lastCpu = cpu == null ? null : cpu.stop();
        return out;
    }

    /** The nodes' CPU time during the last {@link #timedRun}, or null for a --url target or before one. */
    CpuUse lastCpu() {
        return lastCpu;
    }

    /** When the last {@link #timedRun} (or {@link #measure}) ran, or null before one. */
    GcLog.Window lastWindow() {
        return lastWindow;
    }

    private Profile convert(Path jfr, Set<AsyncProfiler.Event> events, long pid, Path dir, String node) throws InterruptedException {
        try {
            List<String> files = new ArrayList<>();
            for (Path file : AsyncProfiler.convert(jfr, events, dir, node)) {
                files.add(file.getFileName().toString());
            }
            String engine = events.contains(AsyncProfiler.Event.CPU) ? AsyncProfiler.engine(dir.resolve(AsyncProfiler.CPU_COLLAPSED)) : "not used";
            return new Profile("async-profiler 4.2 in pid " + pid + " (" + node + ") during the measured run, events "
                    + events.toString().toLowerCase() + "; cpu engine: " + engine + ".", files);
        } catch (IOException e) {
            return new Profile("Profiled " + node + " into " + jfr + " but converting it failed: " + e.getMessage(), List.of());
        }
    }

    /** Each node's GET /v0/status body (or the error), n1 first. */
    Map<String, String> statuses() throws InterruptedException {
        Map<String, String> statuses = new LinkedHashMap<>();
        HttpClient http = security.httpClient().connectTimeout(Duration.ofSeconds(2)).build();
        for (Map.Entry<String, URI> node : nodeUris().entrySet()) {
            try {
                HttpResponse<String> r = http.send(security.authorize(HttpRequest.newBuilder(node.getValue().resolve("/v0/status")))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                statuses.put(node.getKey(), r.statusCode() + " " + r.body().trim());
            } catch (IOException e) {
                statuses.put(node.getKey(), "no answer: " + e);
            }
        }
        return statuses;
    }

    /** Each node's HTTP base URL by id, n1 first; a --url target is the one node "target". */
    Map<String, URI> nodeUris() {
        Map<String, URI> nodes = new LinkedHashMap<>();
        List<URI> uris = cluster != null ? cluster.httpUris() : List.of(target);
        List<String> ids = cluster != null ? cluster.ids() : List.of("target");
        for (int i = 0; i < uris.size(); i++) {
            nodes.put(ids.get(i), uris.get(i));
        }
        return nodes;
    }

    /**
     * Each node's GC pauses (n1 first) during {@code window} (null: unknown) and over its whole log,
     * or null for a --url target. A node without a GC log is left out.
     */
    List<NodeGc> gc(GcLog.Window window) throws IOException {
        if (cluster == null) {
            return null;
        }
        List<NodeGc> nodes = new ArrayList<>();
        List<String> ids = cluster.ids();
        List<String> commands = cluster.commandLines();
        for (int i = 0; i < ids.size(); i++) {
            Path gcLog = runDir.resolve("gc-" + ids.get(i) + ".log");
            if (Files.exists(gcLog)) {
                nodes.add(NodeGc.of(ids.get(i), commands.get(i), Files.readString(gcLog, StandardCharsets.UTF_8), window));
            }
        }
        return nodes;
    }

    @Override
    public void close() {
        if (cluster != null) {
            log.println("stopping the nodes ...");
            cluster.close();
        }
    }
}
