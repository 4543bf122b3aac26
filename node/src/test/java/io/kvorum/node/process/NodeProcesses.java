package io.kvorum.node.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.NodeJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts {@code java -jar kvorum-node.jar [options]} child processes ({@link NodeJvm}s) as docs/operations.md#starting-nodes
 * says an operator starts a node, and always cleans them up: after each test, passed or failed,
 * every process still running is SIGKILLed and reaped, and when the test failed the logs of every
 * process it started are printed. Register it on an instance field after the test's
 * {@code @TempDir}:
 *
 * <pre>{@code
 * @TempDir Path tmp;
 * @RegisterExtension final NodeProcesses nodes = new NodeProcesses(() -> tmp);
 * }</pre>
 *
 * <p>Each process sees only the {@code KVORUM_*} variables the test gives it, and writes stdout and
 * stderr into files of their own under the temporary directory's {@code logs/}. The JUnit
 * temporary directory is deleted after this extension's {@code afterEach}, so no node is still
 * writing into it then. A JVM shutdown hook also kills whatever is left if the test JVM itself is
 * stopped.
 */
final class NodeProcesses implements AfterEachCallback {

    private static final Set<NodeJvm> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(NodeJvm::destroy),
                "kill-node-processes"));
    }

    private final Supplier<Path> tempDir;
    private final List<NodeJvm> started = new ArrayList<>();
    private final AtomicInteger sequence = new AtomicInteger();

    /** @param tempDir the test's temporary directory; logs go to its {@code logs/} */
    NodeProcesses(Supplier<Path> tempDir) {
        this.tempDir = tempDir;
    }

    /** The jar under test; failsafe passes its path in {@code kvorum.node.jar}. */
    static Path jar() {
        String path = System.getProperty("kvorum.node.jar");
        assertThat(path).as("system property kvorum.node.jar (failsafe sets it)").isNotBlank();
        Path jar = Path.of(path);
        assertThat(jar).as("the node jar, built by `mvn package`").isRegularFile();
        return jar;
    }

    /**
     * A node process to describe further (arguments, environment, working directory) and start;
     * its logs are {@code logs/NN-name.out} and {@code .err}, numbered in the order of launches.
     */
    NodeJvm.Launch launch(String name) {
        Path logs = tempDir.get().resolve("logs");
        try {
            Files.createDirectories(logs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String base = String.format("%02d-%s", sequence.incrementAndGet(), name);
        // No warm-up (docs/operations.md, "Start-up and readiness") unless a test asks for it with
        // --warm-up: it adds seconds to every start, and the tests that need it say so.
        return NodeJvm.launch(name).jar(jar()).withoutInheritedNodeSettings().env("KVORUM_WARM_UP", "0")
                .output(logs.resolve(base + ".out"), logs.resolve(base + ".err"))
                .whenStarted(p -> {
                    started.add(p);
                    LIVE.add(p);
                });
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> stuck = new ArrayList<>();
        for (NodeJvm p : started) {
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
}
