package io.kvorum.perf.baseline;

import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * {@link NettyServerMain} in a JVM of its own, launched as perf launches its nodes ({@link NodeJvm},
 * the same heap, {@code -XX:+AlwaysPreTouch} and ZGC), on a free loopback port, logging to
 * {@code netty.log} in the run folder. Stopped (SIGTERM, then SIGKILL after 5 s) on close.
 */
public final class NettyServer implements BaselineServer {

    /** The nodes' flags in {@code perf run}, without the profiling and GC-log ones. */
    static final List<String> JVM_OPTIONS = List.of("-XX:+AlwaysPreTouch", "-XX:+UseZGC");
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);

    private final NodeJvm jvm;
    private final URI uri;

    private NettyServer(NodeJvm jvm, URI uri) {
        this.jvm = jvm;
        this.uri = uri;
    }

    /**
     * Starts the server with this JVM's class path and waits (at most {@link NodeJvm#READY_TIMEOUT})
     * until it answers.
     *
     * @param heap -Xms and -Xmx, as {@code perf run --heap}
     */
    public static NettyServer start(Path dir, int bodyBytes, String heap) {
        int port = Ports.freePort();
        NodeJvm jvm = NodeJvm.launch("netty")
                .heap(heap)
                .jvmOptions(JVM_OPTIONS)
                .classpath(System.getProperty("java.class.path"), NettyServerMain.class.getName())
                .args(Integer.toString(port), Integer.toString(bodyBytes))
                .output(dir.resolve("netty.log"))
                .start();
        try {
            jvm.awaitReady(port);
        } catch (RuntimeException | AssertionError e) {
            jvm.destroy();
            throw e;
        }
        return new NettyServer(jvm, NodeJvm.loopbackUri(port));
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public String commandLine() {
        return jvm.commandLine();
    }

    @Override
    public long pid() {
        return jvm.pid();
    }

    /** Whether its JVM is still running. */
    public boolean isAlive() {
        return jvm.isAlive();
    }

    @Override
    public void close() {
        jvm.terminate();
        jvm.awaitExitOrKill(STOP_WAIT);
    }
}
