package io.kvorum.perf.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * N real Kvorum nodes, each its own JVM started from the node jar, on free loopback ports, with
 * their data in a temporary directory: the system under test of {@code ./kvorum perf}.
 *
 * <p>Lifecycle: {@link #start} returns only once every node answers {@code GET /v0/status} with
 * 200 (or throws, having stopped what it started); {@link #close} stops every node (SIGTERM, then
 * SIGKILL after 10 s) and deletes the data. A JVM shutdown hook closes the cluster too, so Ctrl-C
 * leaves no node behind. Node logs ({@code n1.log}) and GC logs ({@code gc-n1.log}) stay in the
 * run directory for the report.
 *
 * <p>Ports are found free by binding port 0 and releasing it, so another process may take one in
 * between; the node then exits at once ("port in use") and {@link #start} fails with its log.
 */
public final class LocalCluster implements AutoCloseable {

    /** How long {@link #start} waits for every node to be ready. */
    static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    /** How long {@link #close} waits after SIGTERM before SIGKILL (the SPEC promises exit within 10 s). */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);
    private static final int LOG_TAIL_LINES = 30;

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

    private record Node(String id, int httpPort, List<String> command, Process process) {}

    private final List<Node> nodes;
    private final Path dataRoot;
    private final Thread shutdownHook;
    private boolean closed;

    private LocalCluster(List<Node> nodes, Path dataRoot) {
        this.nodes = nodes;
        this.dataRoot = dataRoot;
        this.shutdownHook = new Thread(this::stopAll, "local-cluster-shutdown");
    }

    /**
     * Starts the nodes and waits (at most {@link #READY_TIMEOUT}) until each is ready.
     *
     * @throws IOException when the jar is missing, a node exits or is not ready in time; the message
     *                     holds the tail of that node's log. Every node started is stopped first.
     */
    public static LocalCluster start(Spec spec) throws IOException, InterruptedException {
        if (!Files.isRegularFile(spec.jar())) {
            throw new IOException("node jar not found: " + spec.jar() + " (build it with ./kvorum run, or mvn -pl node -am package)");
        }
        Files.createDirectories(spec.runDir());
        Path dataRoot = Files.createTempDirectory("kvorum-perf-data-");
        List<String> ids = new ArrayList<>();
        List<int[]> ports = freePorts(spec.nodes());
        StringBuilder topology = new StringBuilder();
        for (int i = 0; i < spec.nodes(); i++) {
            String id = "n" + (i + 1);
            ids.add(id);
            topology.append(i == 0 ? "" : ",").append(id).append("=127.0.0.1:").append(ports.get(i)[0]).append(':').append(ports.get(i)[1]);
        }
        List<Node> started = new ArrayList<>();
        LocalCluster cluster = new LocalCluster(started, dataRoot);
        Runtime.getRuntime().addShutdownHook(cluster.shutdownHook);
        try {
            for (int i = 0; i < spec.nodes(); i++) {
                String id = ids.get(i);
                List<String> command = nodeCommand(spec, id, topology.toString(), dataRoot.resolve(id));
                Process process = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(spec.runDir().resolve(id + ".log").toFile())
                        .start();
                started.add(new Node(id, ports.get(i)[0], List.copyOf(command), process));
            }
            cluster.awaitReady(spec.runDir());
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    static List<String> nodeCommand(Spec spec, String id, String topology, Path dataDir) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xms" + spec.heap());
        command.add("-Xmx" + spec.heap());
        // Touches the whole heap at start: otherwise the kernel zeroes fresh heap pages during the
        // measured run (6% of n1's CPU in one profile) and the run measures the heap's growth.
        command.add("-XX:+AlwaysPreTouch");
        // Lets async-profiler attribute samples to the exact frame, not the nearest safepoint.
        command.add("-XX:+UnlockDiagnosticVMOptions");
        command.add("-XX:+DebugNonSafepoints");
        command.add("-Xlog:gc*:file=" + spec.runDir().toAbsolutePath().resolve("gc-" + id + ".log"));
        command.addAll(spec.jvmOptions());
        command.add("-jar");
        command.add(spec.jar().toAbsolutePath().toString());
        command.add("--cluster");
        command.add(topology);
        command.add("--node-id");
        command.add(id);
        command.add("--data-dir");
        command.add(dataDir.toString());
        command.addAll(spec.nodeOptions());
        return command;
    }

    /** n pairs of distinct free loopback ports: [http, grpc]. All sockets are held until all are chosen. */
    private static List<int[]> freePorts(int n) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < 2 * n; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                socket.setReuseAddress(true);
                sockets.add(socket);
            }
            List<int[]> ports = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ports.add(new int[] {sockets.get(2 * i).getLocalPort(), sockets.get(2 * i + 1).getLocalPort()});
            }
            return ports;
        } finally {
            for (ServerSocket socket : sockets) {
                socket.close();
            }
        }
    }

    private void awaitReady(Path runDir) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        for (Node node : nodes) {
            HttpRequest status = HttpRequest.newBuilder(uri(node).resolve("/v0/status")).timeout(Duration.ofSeconds(2)).build();
            while (true) {
                if (!node.process().isAlive()) {
                    throw new IOException(node.id() + " exited with " + node.process().exitValue() + " before it was ready; "
                            + logTail(runDir, node.id()));
                }
                try {
                    if (http.send(status, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                        break;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException(node.id() + " did not answer GET /v0/status with 200 within "
                            + READY_TIMEOUT.toSeconds() + " s; " + logTail(runDir, node.id()));
                }
                Thread.sleep(100); // poll interval, bounded by the deadline above
            }
        }
    }

    private static String logTail(Path runDir, String id) {
        Path log = runDir.resolve(id + ".log");
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return "last lines of " + log + ":\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "no log at " + log;
        }
    }

    private static URI uri(Node node) {
        return URI.create("http://127.0.0.1:" + node.httpPort());
    }

    /** The HTTP base URI of each node, n1 first. */
    public List<URI> httpUris() {
        return nodes.stream().map(LocalCluster::uri).toList();
    }

    /** n1, the node the load is sent to (and the one profiled). */
    public URI coordinator() {
        return uri(nodes.get(0));
    }

    /** The process id of a node, "n1".."nN". */
    public long pid(String nodeId) {
        return node(nodeId).process().pid();
    }

    public List<String> ids() {
        return nodes.stream().map(Node::id).toList();
    }

    /** The exact command line of each node, n1 first, as a shell would print it, for reports. */
    public List<String> commandLines() {
        return nodes.stream().map(n -> String.join(" ", n.command())).toList();
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
        nodes.forEach(n -> n.process().destroy());
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        for (Node node : nodes) {
            try {
                long left = Math.max(0, deadline - System.nanoTime());
                if (!node.process().waitFor(left, TimeUnit.NANOSECONDS)) {
                    node.process().destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                node.process().destroyForcibly();
                Thread.currentThread().interrupt();
            }
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
