package io.kvorum.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One Kvorum node in a JVM of its own, a child of this one: the one launcher of node processes,
 * for the node's process tests and for perf's local cluster. {@link #launch} describes the command
 * line ({@code java [-Xms -Xmx] [JVM flags] -jar JAR | -cp CP MAIN [node flags]}), its environment,
 * working directory and log files; {@link Launch#start} starts it.
 *
 * <p>Lifecycle: a started JVM runs until it exits or is signalled. The JVM is the direct child (no
 * shell in between), so it receives the signals itself: {@link #terminate} sends SIGTERM and does
 * not wait, {@link #kill} sends SIGKILL and waits at most {@link #KILL_TIMEOUT}. Nothing stops it
 * when this JVM exits: the owner (a test extension, a cluster) does, in a shutdown hook if needed.
 *
 * <p>Bounds: every wait has one ({@link #awaitReady}, {@link #awaitExit}, {@link #awaitExitOrKill});
 * a wait that runs out fails with an {@link AssertionError}, as {@link Readiness} does, whose message
 * has {@link #describe()}: the command, the state and the last {@link #DESCRIBED_LINES} lines of each
 * log.
 *
 * <p>Threading: a {@link Launch} is for one thread; a {@code NodeJvm} may be used from any thread.
 */
public final class NodeJvm {

    /** JVM start, LevelDB open and bind, on a busy 2-core machine. */
    public static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    /** How long a SIGKILLed process may take to be reaped. */
    public static final Duration KILL_TIMEOUT = Duration.ofSeconds(30);
    /** How much of each log {@link #describe()} shows: its last lines. */
    public static final int DESCRIBED_LINES = 500;

    /** What the JVM's launcher reads from the environment; it would print "Picked up ..." on stderr. */
    private static final List<String> LAUNCHER_VARIABLES = List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS");

    /** Where a JVM's output goes: stdout's file, and stderr's, or null when stderr goes into stdout's. */
    private record Logs(Path stdout, Path stderr) {
        boolean merged() {
            return stderr == null;
        }
    }

    private final String name;
    private final List<String> command;
    private final Path workDir;
    private final Logs logs;
    private final Process process;

    private NodeJvm(String name, List<String> command, Path workDir, Logs logs, Process process) {
        this.name = name;
        this.command = command;
        this.workDir = workDir;
        this.logs = logs;
        this.process = process;
    }

    /** Describes a node JVM to start, named {@code name} in messages (a node id, say). */
    public static Launch launch(String name) {
        return new Launch(name);
    }

    /** One {@code --cluster} entry on 127.0.0.1: {@code id=127.0.0.1:httpPort:grpcPort}. */
    public static String clusterMember(String id, int httpPort, int grpcPort) {
        return id + "=127.0.0.1:" + httpPort + ":" + grpcPort;
    }

    /** The HTTP base URI of a node on 127.0.0.1. */
    public static URI loopbackUri(int httpPort) {
        return URI.create("http://127.0.0.1:" + httpPort);
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The command the JVM was started with. */
    public List<String> command() {
        return command;
    }

    /** {@link #command()} as a shell would print it (arguments are not quoted). */
    public String commandLine() {
        return String.join(" ", command);
    }

    /** {@link #awaitReady(int, Duration)} within {@link #READY_TIMEOUT}. */
    public NodeJvm awaitReady(int httpPort) {
        return awaitReady(httpPort, READY_TIMEOUT);
    }

    /**
     * Waits until {@code GET /v0/status} on {@code httpPort} answers 200 ({@link Readiness}).
     *
     * @throws AssertionError at once if the process exits first ("n1 exited with 3 before it was
     *         ready"), or after {@code bound}; the message has {@link #describe()}
     */
    public NodeJvm awaitReady(int httpPort, Duration bound) {
        return awaitReady(HttpClient.newHttpClient(), URI.create(loopbackUri(httpPort) + "/v0/status"), bound);
    }

    /**
     * Waits until {@code GET status} answers 200, asked with {@code http} (one that trusts the
     * node's CA when it serves HTTPS).
     *
     * @throws AssertionError at once if the process exits first, or after {@code bound}; the
     *         message has {@link #describe()}
     */
    public NodeJvm awaitReady(HttpClient http, URI status, Duration bound) {
        Readiness.awaitStatus200(http, name, status, bound, () -> {
            if (!process.isAlive()) {
                throw new AssertionError(name + " exited with " + process.exitValue() + " before it was ready\n"
                        + describe());
            }
        }, this::describe);
        return this;
    }

    /**
     * Waits, within {@link #READY_TIMEOUT}, until the node on {@code httpPort} serves reads
     * ({@link Readiness#awaitServing}); the failure message has {@link #describe()}.
     */
    public NodeJvm awaitServing(int httpPort) {
        Readiness.awaitServing(name, URI.create(loopbackUri(httpPort) + "/v0/status"), READY_TIMEOUT, this::describe);
        return this;
    }

    /** SIGTERM; does not wait. */
    public void terminate() {
        process.destroy();
    }

    /**
     * SIGKILL, then waits until the process is gone.
     *
     * @throws AssertionError when it is still there after {@link #KILL_TIMEOUT}
     */
    public void kill() {
        process.destroyForcibly();
        awaitExit(KILL_TIMEOUT);
    }

    /**
     * Waits for the process to exit.
     *
     * @return its exit status
     * @throws AssertionError with {@link #describe()} when it is still running after {@code bound}
     */
    public int awaitExit(Duration bound) {
        try {
            if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(this + " did not exit within " + bound.toMillis() + " ms\n" + describe());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + this + " to exit", e);
        }
        return process.exitValue();
    }

    /**
     * Waits at most {@code grace} for the process to exit, then SIGKILLs it and waits at most
     * {@link #KILL_TIMEOUT} more. Interrupted, it SIGKILLs at once and keeps the interrupt.
     *
     * @return whether the process is gone
     */
    public boolean awaitExitOrKill(Duration grace) {
        try {
            if (process.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS)) {
                return true;
            }
            process.destroyForcibly();
            return process.waitFor(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    /** SIGKILL if still running, and wait for it: for cleanup. Returns false if it would not die. */
    public boolean destroy() {
        return awaitExitOrKill(Duration.ZERO);
    }

    /** Everything the process wrote to stdout so far (with one log: stdout and stderr). */
    public String stdout() {
        return read(logs.stdout());
    }

    /**
     * Everything the process wrote to stderr so far.
     *
     * @throws IllegalStateException when stderr goes to the same log as stdout
     */
    public String stderr() {
        if (logs.merged()) {
            throw new IllegalStateException(name + " writes stderr into " + logs.stdout() + "; read stdout()");
        }
        return read(logs.stderr());
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "<cannot read " + file + ": " + e + ">";
        }
    }

    /** The command, the state and the last {@link #DESCRIBED_LINES} lines of each log, for failure messages. */
    public String describe() {
        Map<String, String> parts = new LinkedHashMap<>();
        parts.put("command", commandLine());
        parts.put("working dir", workDir != null ? workDir.toString() : "(inherited)");
        parts.put("pid", Long.toString(process.pid()));
        parts.put("state", process.isAlive() ? "running" : "exited with status " + process.exitValue());
        StringBuilder sb = new StringBuilder("---- node process ").append(name).append(" ----\n");
        parts.forEach((k, v) -> sb.append(k).append(": ").append(v).append('\n'));
        appendTail(sb, logs.merged() ? "stdout and stderr" : "stdout", logs.stdout());
        if (!logs.merged()) {
            appendTail(sb, "stderr", logs.stderr());
        }
        return sb.append("---- end of ").append(name).append(" ----").toString();
    }

    private static void appendTail(StringBuilder sb, String what, Path file) {
        List<String> lines = read(file).lines().toList();
        int skipped = Math.max(0, lines.size() - DESCRIBED_LINES);
        sb.append("---- ").append(what).append(" (").append(file)
                .append(skipped > 0 ? ", last " + DESCRIBED_LINES + " of " + lines.size() + " lines" : "")
                .append(") ----\n");
        lines.subList(skipped, lines.size()).forEach(line -> sb.append(line).append('\n'));
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }

    /**
     * A node JVM to start: what to run ({@link #jar} or {@link #classpath}, one of them required),
     * its JVM flags, node flags, environment, working directory and where its output goes
     * ({@link #output}, required). Each setter returns this launch.
     */
    public static final class Launch {
        private final String name;
        private Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        private List<String> entryPoint;
        private String heap;
        private final List<String> jvmOptions = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private boolean inheritNodeSettings = true;
        private Path workDir;
        private Logs logs;
        private Consumer<NodeJvm> whenStarted = jvm -> { };

        private Launch(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** The {@code java} to run; by default this JVM's own ({@code java.home}). */
        public Launch java(Path javaBinary) {
            java = Objects.requireNonNull(javaBinary, "javaBinary");
            return this;
        }

        /** Runs {@code java -jar jar} (an absolute path, so that a working directory does not change it). */
        public Launch jar(Path jar) {
            entryPoint = List.of("-jar", jar.toAbsolutePath().toString());
            return this;
        }

        /** Runs {@code java -cp classpath mainClass}. */
        public Launch classpath(String classpath, String mainClass) {
            entryPoint = List.of("-cp", classpath, mainClass);
            return this;
        }

        /** {@code -Xms} and {@code -Xmx}, e.g. "1g"; first of the JVM flags. Unset: the JVM's defaults. */
        public Launch heap(String size) {
            heap = Objects.requireNonNull(size, "size");
            return this;
        }

        /** JVM flags, after the heap and in this order. */
        public Launch jvmOptions(List<String> options) {
            jvmOptions.addAll(options);
            return this;
        }

        public Launch jvmOptions(String... options) {
            return jvmOptions(Arrays.asList(options));
        }

        /** Node flags, after the jar or main class, in this order. */
        public Launch args(List<String> more) {
            args.addAll(more);
            return this;
        }

        public Launch args(String... more) {
            return args(Arrays.asList(more));
        }

        /** One environment variable of the child, over whatever it inherits. */
        public Launch env(String key, String value) {
            env.put(key, value);
            return this;
        }

        /**
         * The child inherits none of this JVM's {@code KVORUM_*} variables nor the variables the
         * {@code java} launcher reads ({@code JAVA_TOOL_OPTIONS} ...), so it sees exactly the node
         * settings given with {@link #env}.
         */
        public Launch withoutInheritedNodeSettings() {
            inheritNodeSettings = false;
            return this;
        }

        /** The child's working directory; by default this JVM's. */
        public Launch workDir(Path dir) {
            workDir = dir;
            return this;
        }

        /** stdout and stderr into one file, created or truncated. */
        public Launch output(Path log) {
            return output(log, null);
        }

        /** stdout and stderr each into its file ({@code stderr} null: into stdout's). */
        public Launch output(Path stdout, Path stderr) {
            logs = new Logs(Objects.requireNonNull(stdout, "stdout"), stderr);
            return this;
        }

        /** Called with each JVM this launch starts, right after it started (to track it for cleanup, say). */
        public Launch whenStarted(Consumer<NodeJvm> listener) {
            whenStarted = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** The command line {@link #start} runs. */
        public List<String> command() {
            if (entryPoint == null) {
                throw new IllegalStateException(name + ": neither jar(...) nor classpath(...) was given");
            }
            List<String> command = new ArrayList<>();
            command.add(java.toString());
            if (heap != null) {
                command.add("-Xms" + heap);
                command.add("-Xmx" + heap);
            }
            command.addAll(jvmOptions);
            command.addAll(entryPoint);
            command.addAll(args);
            return List.copyOf(command);
        }

        /**
         * Starts the JVM, its stdin empty ({@code /dev/null}), and does not wait for it to be ready.
         *
         * @throws UncheckedIOException when the process cannot be started
         */
        public NodeJvm start() {
            if (logs == null) {
                throw new IllegalStateException(name + ": output(...) was not given");
            }
            List<String> command = command();
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(logs.stdout().toFile());
            if (logs.merged()) {
                builder.redirectErrorStream(true);
            } else {
                builder.redirectError(logs.stderr().toFile());
            }
            if (workDir != null) {
                builder.directory(workDir.toFile());
            }
            Map<String, String> childEnv = builder.environment();
            if (!inheritNodeSettings) {
                childEnv.keySet().removeIf(k -> k.startsWith("KVORUM_"));
                childEnv.keySet().removeAll(LAUNCHER_VARIABLES);
            }
            childEnv.putAll(env);
            NodeJvm jvm;
            try {
                jvm = new NodeJvm(name, command, workDir, logs, builder.start());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start " + name + ": " + String.join(" ", command), e);
            }
            whenStarted.accept(jvm);
            return jvm;
        }

        /** Starts the JVM and waits until it serves on {@code httpPort} ({@link NodeJvm#awaitReady(int)}). */
        public NodeJvm startReady(int httpPort) {
            return start().awaitReady(httpPort);
        }
    }
}
