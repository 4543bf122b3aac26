package io.kvorum.node.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts {@link NodeProcess}es for a test and always cleans them up: after each test, passed or
 * failed, every process still running is SIGKILLed and reaped, and when the test failed the logs of
 * every process it started are printed. Register it on an instance field after the test's
 * {@code @TempDir}:
 *
 * <pre>{@code
 * @TempDir Path tmp;
 * @RegisterExtension final NodeProcesses nodes = new NodeProcesses(() -> tmp);
 * }</pre>
 *
 * <p>The JUnit temporary directory is deleted after this extension's {@code afterEach}, so no
 * node is still writing into it then. A JVM shutdown hook also kills whatever is left if the test
 * JVM itself is stopped.
 */
final class NodeProcesses implements AfterEachCallback {

    private static final Set<NodeProcess> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(NodeProcess::destroy),
                "kill-node-processes"));
    }

    private final Supplier<Path> tempDir;
    private final List<NodeProcess> started = new ArrayList<>();
    private final AtomicInteger sequence = new AtomicInteger();

    /** @param tempDir the test's temporary directory; logs go to its {@code logs/} */
    NodeProcesses(Supplier<Path> tempDir) {
        this.tempDir = tempDir;
    }

    /** Describes a process to start; {@link Launch#start()} starts it. */
    Launch launch(String name) {
        return new Launch(name);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> stuck = new ArrayList<>();
        for (NodeProcess p : started) {
            if (!p.destroy()) {
                stuck.add(p.toString());
            }
            LIVE.remove(p);
        }
        if (context.getExecutionException().isPresent() || !stuck.isEmpty()) {
            StringBuilder logs = new StringBuilder("==== logs of the node processes of ")
                    .append(context.getDisplayName()).append(" ====\n");
            started.forEach(p -> logs.append(p.describe()).append('\n'));
            System.out.println(logs); // the test report shows this next to the failure
        }
        started.clear();
        if (!stuck.isEmpty()) {
            throw new AssertionError("SIGKILL did not end " + stuck);
        }
    }

    /** A process to start: arguments, environment and working directory. */
    final class Launch {
        private final String name;
        private final List<String> args = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private Path workDir;

        private Launch(String name) {
            this.name = name;
        }

        Launch args(String... more) {
            args.addAll(Arrays.asList(more));
            return this;
        }

        Launch args(List<String> more) {
            args.addAll(more);
            return this;
        }

        Launch env(String key, String value) {
            env.put(key, value);
            return this;
        }

        Launch workDir(Path dir) {
            workDir = dir;
            return this;
        }

        NodeProcess start() {
            Path logs = tempDir.get().resolve("logs");
            try {
                Files.createDirectories(logs);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            String base = String.format("%02d-%s", sequence.incrementAndGet(), name);
            NodeProcess p = NodeProcess.start(name, args, env, workDir,
                    logs.resolve(base + ".out"), logs.resolve(base + ".err"));
            started.add(p);
            LIVE.add(p);
            return p;
        }

        /** Starts the process and waits until it serves on {@code httpPort}. */
        NodeProcess startReady(int httpPort) {
            return start().awaitReady(httpPort);
        }
    }
}
