package io.kvorum.perf.peers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The server processes of one peer cluster (Cassandra's JVMs, etcd's): started with their output
 * in the run folder, stopped together (SIGTERM, then SIGKILL after {@link #STOP_TIMEOUT}) by
 * {@link #close} or by a shutdown hook on Ctrl-C, their data folder deleted afterwards.
 */
final class PeerProcesses implements AutoCloseable {

    static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(250);

    private record Started(String name, Process process, List<String> command, Path output) {}

    private final Path dataRoot;
    private final List<Started> started = new ArrayList<>();
    private final Thread shutdownHook = new Thread(this::stopAll, "peer-cluster-shutdown");
    private boolean closed;

    PeerProcesses(Path dataRoot) {
        this.dataRoot = dataRoot;
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    Path dataRoot() {
        return dataRoot;
    }

    /** Starts one process, its output (both streams) into {@code output}. */
    synchronized Process start(String name, List<String> command, Path output) throws IOException {
        return start(name, Map.of(), command, command, output);
    }

    /**
     * Starts one process with {@code environment} added to this JVM's, its output into {@code output};
     * {@link #commandLines} shows it as {@code shown} (a long class path abbreviated, say).
     */
    synchronized Process start(String name, Map<String, String> environment, List<String> command, List<String> shown,
                               Path output) throws IOException {
        if (closed) {
            throw new IllegalStateException("the cluster is stopped");
        }
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()));
        builder.environment().putAll(environment);
        Process p = builder.start();
        List<String> line = new ArrayList<>();
        environment.forEach((k, v) -> line.add(k + "=" + v));
        line.addAll(shown);
        started.add(new Started(name, p, List.copyOf(line), output));
        return p;
    }

    synchronized List<Long> pids() {
        return started.stream().map(s -> s.process().pid()).toList();
    }

    synchronized List<String> commandLines() {
        return started.stream().map(s -> String.join(" ", s.command())).toList();
    }

    /**
     * Waits until {@code host:port} accepts a connection, at most {@code bound}.
     *
     * @throws IOException with the tail of each of {@code logs} when the process exits or the bound passes
     */
    static void awaitPort(Process process, String name, String host, int port, Duration bound, List<Path> logs)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException(name + " exited with status " + process.exitValue() + " before it served on "
                        + host + ":" + port + tails(logs));
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 1000);
                return;
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(name + " did not serve on " + host + ":" + port + " within " + bound.toSeconds()
                        + " s" + tails(logs));
            }
            Thread.sleep(POLL.toMillis()); // the poll interval of a bounded wait
        }
    }

    private static String tails(List<Path> logs) {
        StringBuilder all = new StringBuilder();
        for (Path log : logs) {
            if (Files.exists(log)) {
                all.append("; the end of ").append(log).append(":\n").append(tail(log, 20));
            }
        }
        return all.toString();
    }

    /** The last lines of a file, or a note that there is none. */
    static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(" + file + " cannot be read: " + e.getMessage() + ")";
        }
    }

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
        started.forEach(s -> s.process().destroy());
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        for (Started s : started) {
            try {
                if (!s.process().waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    s.process().destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                s.process().destroyForcibly();
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
            System.err.println("kvorum perf peers: could not delete " + root + ": " + e.getMessage());
        }
    }
}
