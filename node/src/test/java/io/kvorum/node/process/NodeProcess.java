package io.kvorum.node.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.Readiness;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One {@code java -jar kvorum-node.jar [options]} child process, started as SPEC §1 says an
 * operator starts it, with stdout and stderr in files so that a failing test can show them.
 *
 * <p>Signals: {@link #kill()} is {@link Process#destroyForcibly()}, which on Linux sends SIGKILL;
 * {@link #terminate()} is {@link Process#destroy()}, which sends SIGTERM. The JVM is the direct
 * child (no shell in between), so the node receives the signal itself.
 *
 * <p>Instances come from {@link NodeProcesses#launch}, which destroys every one of them after
 * each test, passed or failed.
 */
final class NodeProcess {

    /** JVM start, LevelDB open and bind, on a busy 2-core machine. */
    static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    /** How long a SIGKILLed process may take to be reaped. */
    static final Duration KILL_TIMEOUT = Duration.ofSeconds(30);

    private final String name;
    private final List<String> command;
    private final Path workDir;
    private final Process process;
    private final Path stdout;
    private final Path stderr;

    private NodeProcess(String name, List<String> command, Path workDir, Process process, Path stdout, Path stderr) {
        this.name = name;
        this.command = command;
        this.workDir = workDir;
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /** The jar under test; failsafe passes its path in {@code kvorum.node.jar}. */
    static Path jar() {
        String path = System.getProperty("kvorum.node.jar");
        assertThat(path).as("system property kvorum.node.jar (failsafe sets it)").isNotBlank();
        Path jar = Path.of(path);
        assertThat(jar).as("the node jar, built by `mvn package`").isRegularFile();
        return jar;
    }

    /** One {@code --cluster} entry on 127.0.0.1. */
    static String cluster(String id, int httpPort, int grpcPort) {
        return id + "=127.0.0.1:" + httpPort + ":" + grpcPort;
    }

    static URI baseUri(int httpPort) {
        return URI.create("http://127.0.0.1:" + httpPort);
    }

    /**
     * Starts the process.
     *
     * @param env {@code KVORUM_*} variables for the child; the parent's are removed first, so the
     *            child sees exactly these
     */
    static NodeProcess start(String name, List<String> args, Map<String, String> env, Path workDir,
                             Path stdout, Path stderr) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-jar");
        command.add(jar().toString());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(nullDevice()));
        if (workDir != null) {
            builder.directory(workDir.toFile());
        }
        Map<String, String> childEnv = builder.environment();
        childEnv.keySet().removeIf(k -> k.startsWith("KVORUM_"));
        // The launcher would print "Picked up ..." on stderr, which is not the node's output.
        childEnv.keySet().removeAll(List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"));
        childEnv.putAll(env);
        try {
            return new NodeProcess(name, List.copyOf(command), workDir, builder.start(), stdout, stderr);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    private static java.io.File nullDevice() {
        return new java.io.File("/dev/null");
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Waits until {@code GET /v0/status} on {@code httpPort} answers 200. Fails at once if the
     * process exits first, and after {@link #READY_TIMEOUT} if it never becomes ready.
     */
    NodeProcess awaitReady(int httpPort) {
        URI status = URI.create(baseUri(httpPort) + "/v0/status");
        Readiness.awaitStatus200(name, status, READY_TIMEOUT, () -> {
            if (!process.isAlive()) {
                throw new AssertionError(name + " exited with status " + process.exitValue()
                        + " before it was ready\n" + describe());
            }
        }, this::describe);
        return this;
    }

    /** SIGKILL, then wait until the process is gone. */
    void kill() {
        process.destroyForcibly();
        awaitExit(KILL_TIMEOUT);
    }

    /** SIGTERM; does not wait. */
    void terminate() {
        process.destroy();
    }

    /**
     * Waits for the process to exit.
     *
     * @return its exit status
     * @throws AssertionError with the logs when it is still running after {@code bound}
     */
    int awaitExit(Duration bound) {
        try {
            if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(name + " (pid " + process.pid() + ") did not exit within "
                        + bound.toMillis() + " ms\n" + describe());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return process.exitValue();
    }

    /** SIGKILL if still running and wait for it; for cleanup. Returns false if it would not die. */
    boolean destroy() {
        if (!process.isAlive()) {
            return true;
        }
        process.destroyForcibly();
        try {
            return process.waitFor(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    String stdout() {
        return read(stdout);
    }

    String stderr() {
        return read(stderr);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "<cannot read " + file + ": " + e + ">";
        }
    }

    /** The command, the state and both logs, for failure messages. */
    String describe() {
        Map<String, String> parts = new LinkedHashMap<>();
        parts.put("command", String.join(" ", command));
        parts.put("working dir", workDir != null ? workDir.toString() : "(inherited)");
        parts.put("pid", Long.toString(process.pid()));
        parts.put("state", process.isAlive() ? "running" : "exited with status " + process.exitValue());
        StringBuilder sb = new StringBuilder("---- node process ").append(name).append(" ----\n");
        parts.forEach((k, v) -> sb.append(k).append(": ").append(v).append('\n'));
        sb.append("---- stdout (").append(stdout).append(") ----\n").append(stdout()).append('\n');
        sb.append("---- stderr (").append(stderr).append(") ----\n").append(stderr()).append('\n');
        return sb.append("---- end of ").append(name).append(" ----").toString();
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}
