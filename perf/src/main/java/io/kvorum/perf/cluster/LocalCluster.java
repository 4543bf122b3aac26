package io.kvorum.perf.cluster;

import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import io.kvorum.testkit.Readiness;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * N real Kvorum nodes, each its own JVM started from the node jar ({@link NodeJvm}), on free
 * loopback ports, with their data in a temporary directory: the system under test of
 * {@code ./kvorum perf}.
 *
 * <p>Lifecycle: {@link #start} returns only once every node answers {@code GET /v0/status} with
 * 200 (or throws, having stopped what it started); {@link #close} stops every node (SIGTERM, then
 * SIGKILL after 10 s) and deletes the data. A JVM shutdown hook closes the cluster too, so Ctrl-C
 * leaves no node behind. Node logs ({@code n1.log}) and GC logs ({@code gc-n1.log}) stay in the
 * run directory for the report.
 *
 * <p>Ports come from testkit's {@link Ports}: free a moment before the nodes bind them, so another
 * process may take one in between; the node then exits at once ("port in use") and {@link #start}
 * fails with its log.
 */
public final class LocalCluster implements AutoCloseable {

    /** How long {@link #start} waits for every node to be ready. */
    static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    /** How long {@link #close} waits after SIGTERM before SIGKILL (a node exits within 10 s: docs/operations.md#signals-and-durability). */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);
    /** Decorations of the GC logs; {@code time} is what {@code GcLog} filters the measured run by. */
    static final String GC_LOG_DECORATIONS = "time,uptime,level,tags";

    /**
     * @param nodes       1 or 3 (any n >= 1 works)
     * @param jar         the node jar ({@code node/target/kvorum-node.jar}, or an older build)
     * @param heap        heap size for -Xms and -Xmx, e.g. "1g"
     * @param jvmOptions  extra JVM flags for each node, e.g. "-XX:+UseZGC"
     * @param nodeOptions extra node flags, e.g. "--fsync"
     * @param runDir      where node logs (n1.log ...) and GC logs (gc-n1.log ...) go
     */
    public record Spec(int nodes, Path jar, String heap, List<String> jvmOptions, List<String> nodeOptions, Path runDir) {
        public Spec {
            if (nodes < 1) {
                throw new IllegalArgumentException("nodes must be at least 1, not " + nodes);
            }
            Objects.requireNonNull(jar, "jar");
            Objects.requireNonNull(heap, "heap");
            jvmOptions = List.copyOf(jvmOptions);
            nodeOptions = List.copyOf(nodeOptions);
            Objects.requireNonNull(runDir, "runDir");
        }
    }

    private record Node(String id, int httpPort, NodeJvm jvm) {}

    private final List<Node> nodes;
    private final Path dataRoot;
    private final ClusterSecurity security;
    private Spec spec; // set by start
    private String firstMember; // n1's --cluster entry, the member a joining node asks
    private final Thread shutdownHook;
    private boolean closed;

    private LocalCluster(List<Node> nodes, Path dataRoot, ClusterSecurity security) {
        this.nodes = nodes;
        this.dataRoot = dataRoot;
        this.security = security;
        this.shutdownHook = new Thread(this::stopAll, "local-cluster-shutdown");
    }

    /**
     * Starts the nodes and waits (at most {@link #READY_TIMEOUT}) until each is ready.
     *
     * @throws IOException when the jar is missing, a node exits or is not ready in time; the message
     *                     holds the tail of that node's log. Every node started is stopped first.
     */
    public static LocalCluster start(Spec spec) throws IOException, InterruptedException {
        return start(spec, ClusterSecurity.none());
    }

    /**
     * {@link #start(Spec)} with the nodes secured as {@code security} says (its node options are
     * added to the spec's); readiness and {@link #httpUris} then use its scheme.
     */
    public static LocalCluster start(Spec spec, ClusterSecurity security) throws IOException, InterruptedException {
        if (!Files.isRegularFile(spec.jar())) {
            throw new IOException("node jar not found: " + spec.jar() + " (build it with ./kvorum run, or mvn -pl node -am package)");
        }
        Files.createDirectories(spec.runDir());
        Path dataRoot = Files.createTempDirectory("kvorum-perf-data-");
        int[] ports = Ports.freePorts(2 * spec.nodes());
        List<String> members = new ArrayList<>();
        for (int i = 0; i < spec.nodes(); i++) {
            members.add(NodeJvm.clusterMember(id(i), ports[2 * i], ports[2 * i + 1]));
        }
        String topology = String.join(",", members);
        List<Node> started = new ArrayList<>();
        LocalCluster cluster = new LocalCluster(started, dataRoot, security);
        cluster.spec = spec;
        cluster.firstMember = members.get(0);
        Runtime.getRuntime().addShutdownHook(cluster.shutdownHook);
        try {
            for (int i = 0; i < spec.nodes(); i++) {
                String id = id(i);
                NodeJvm jvm = launch(spec, id, topology, dataRoot.resolve(id)).args(security.nodeOptions()).start();
                started.add(new Node(id, ports[2 * i], jvm));
            }
            cluster.awaitReady();
            return cluster;
        } catch (UncheckedIOException e) {
            cluster.close();
            throw e.getCause();
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Starts one more node, {@code n<N+1>}, with {@code --join} (docs/operations.md#growing-and-shrinking-a-cluster), asking n1; returns its id
     * once it serves, that is once the cluster has accepted it as joining. It is stopped with the rest.
     */
    public synchronized String join() throws IOException, InterruptedException {
        String id = id(nodes.size());
        int[] ports = Ports.freePorts(2);
        String topology = NodeJvm.clusterMember(id, ports[0], ports[1]) + "," + firstMember;
        Node node = new Node(id, ports[0], launch(spec, id, topology, dataRoot.resolve(id))
                .args("--join").args(security.nodeOptions()).start());
        nodes.add(node);
        try {
            node.jvm().awaitReady(node.httpPort(), READY_TIMEOUT);
        } catch (AssertionError notReady) {
            throw new IOException(notReady.getMessage(), notReady);
        }
        return id;
    }

    /** The HTTP base URI of one node. */
    public URI httpUri(String nodeId) {
        return uri(node(nodeId));
    }

    /** The file a node's output goes to. */
    public Path logOf(String nodeId) {
        return spec.runDir().resolve(nodeId + ".log");
    }

    /** The collector nodes run with unless their JVM options name one. */
    static final String DEFAULT_COLLECTOR = "-XX:+UseZGC";

    /** Whether the flags select a garbage collector ({@code -XX:+UseG1GC}, {@code -XX:+UseZGC}, ...). */
    static boolean choosesCollector(List<String> jvmOptions) {
        return jvmOptions.stream().anyMatch(o -> o.matches("-XX:\\+Use[A-Za-z0-9]*GC"));
    }

    private static String id(int index) {
        return "n" + (index + 1);
    }

    private static NodeJvm.Launch launch(Spec spec, String id, String topology, Path dataDir) {
        return NodeJvm.launch(id)
                .heap(spec.heap())
                // Touches the whole heap at start: otherwise the kernel zeroes fresh heap pages during the
                // measured run (6% of n1's CPU in one profile) and the run measures the heap's growth.
                .jvmOptions("-XX:+AlwaysPreTouch")
                // ZGC, as ./kvorum run, unless --node-jvm-opt picks another collector (perf/README.md, "GC").
                .jvmOptions(choosesCollector(spec.jvmOptions()) ? List.of() : List.of(DEFAULT_COLLECTOR))
                // A node that runs out of memory exits, as ./kvorum run's does, rather than serving half.
                .jvmOptions("-XX:+ExitOnOutOfMemoryError")
                // Lets async-profiler attribute samples to the exact frame, not the nearest safepoint.
                .jvmOptions("-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints")
                // time: wall-clock instant of each line, so the report can keep the pauses of the measured run.
                .jvmOptions("-Xlog:gc*:file=" + spec.runDir().toAbsolutePath().resolve("gc-" + id + ".log") + ":"
                        + GC_LOG_DECORATIONS)
                .jvmOptions(spec.jvmOptions())
                .jar(spec.jar())
                .args("--cluster", topology, "--node-id", id, "--data-dir", dataDir.toString())
                .args(spec.nodeOptions())
                .output(spec.runDir().resolve(id + ".log"));
    }

    /** Waits for the nodes in order, all within one {@link #READY_TIMEOUT} from now. */
    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        for (Node node : nodes) {
            Duration left = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
            try {
                if (security.tls()) {
                    awaitHttps(node, left);
                } else {
                    node.jvm().awaitReady(node.httpPort(), left);
                }
            } catch (AssertionError notReady) {
                // NodeJvm fails a wait as a test fails; the perf commands report an IOException
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for " + node.id() + " to be ready");
                }
                throw new IOException(notReady.getMessage(), notReady);
            }
        }
    }

    /** Polls the node's {@code GET /v0/status} over HTTPS, trusting the run's CA, until it answers 200. */
    private void awaitHttps(Node node, Duration bound) {
        HttpClient http = security.httpClient().connectTimeout(Readiness.PROBE_TIMEOUT).build();
        node.jvm().awaitReady(http, uri(node).resolve("/v0/status"), bound);
    }

    private URI uri(Node node) {
        return URI.create(security.scheme() + "://127.0.0.1:" + node.httpPort());
    }

    /** The HTTP base URI of each node, n1 first. */
    public List<URI> httpUris() {
        return nodes.stream().map(this::uri).toList();
    }

    /** n1, the node the load is sent to (and the one profiled). */
    public URI coordinator() {
        return uri(nodes.get(0));
    }

    /** The process id of a node, "n1".."nN". */
    public long pid(String nodeId) {
        return node(nodeId).jvm().pid();
    }

    public List<String> ids() {
        return nodes.stream().map(Node::id).toList();
    }

    /** The exact command line of each node, n1 first, as a shell would print it, for reports. */
    public List<String> commandLines() {
        return nodes.stream().map(n -> n.jvm().commandLine()).toList();
    }

    private Node node(String id) {
        return nodes.stream().filter(n -> n.id().equals(id)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no node " + id + " in " + ids()));
    }

    /** Stops every node (SIGTERM, SIGKILL after 10 s) and deletes their data. Idempotent. */
    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // called from the hook itself, or while the JVM exits
        }
    }

    private synchronized void stopAll() {
        if (closed) {
            return;
        }
        closed = true;
        nodes.forEach(n -> n.jvm().terminate());
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        for (Node node : nodes) {
            node.jvm().awaitExitOrKill(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
        deleteRecursively(dataRoot);
    }

    private static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("kvorum perf: could not delete " + root + ": " + e.getMessage());
        }
    }
}
