package io.kvorum.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** NodeJvm against {@link StandInNode} JVMs, started from this module's test classes. */
@Timeout(120)
class NodeJvmTest {

    /** SIGTERM and SIGKILL, as the exit status of a JVM they ended. */
    private static final int SIGTERM_STATUS = 128 + 15;
    private static final int SIGKILL_STATUS = 128 + 9;

    @TempDir
    Path tmp;

    private NodeJvm.Launch standIn(String name) throws Exception {
        String classes = Path.of(StandInNode.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        return NodeJvm.launch(name).classpath(classes, StandInNode.class.getName()).heap("32m")
                .jvmOptions("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    }

    private static List<String> member(String id, int httpPort) {
        return List.of("--cluster", NodeJvm.clusterMember(id, httpPort, Ports.freePort()), "--node-id", id);
    }

    @Test
    void theCommandIsJavaHeapJvmFlagsEntryPointThenNodeFlags() {
        NodeJvm.Launch launch = NodeJvm.launch("n1").java(Path.of("/opt/jdk/bin/java")).heap("1g")
                .jvmOptions("-XX:+AlwaysPreTouch").jvmOptions(List.of("-XX:+UseZGC"))
                .jar(Path.of("/tmp/kvorum-node.jar")).args("--node-id", "n1").args(List.of("--fsync"));
        assertThat(launch.command()).containsExactly("/opt/jdk/bin/java", "-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch",
                "-XX:+UseZGC", "-jar", "/tmp/kvorum-node.jar", "--node-id", "n1", "--fsync");
        assertThat(NodeJvm.launch("n1").classpath("a.jar:b.jar", "io.kvorum.node.Main").command())
                .containsExactly(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp", "a.jar:b.jar", "io.kvorum.node.Main");
        assertThatThrownBy(() -> NodeJvm.launch("n1").command()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("neither jar(...) nor classpath(...)");
        assertThatThrownBy(() -> NodeJvm.launch("n1").jar(Path.of("x.jar")).start())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("output(...)");
    }

    @Test
    void startsReadyAndExitsOnSigterm() throws Exception {
        int http = Ports.freePort();
        NodeJvm node = standIn("n1").args(member("n1", http)).workDir(tmp)
                .output(tmp.resolve("n1.out"), tmp.resolve("n1.err")).startReady(http);
        try {
            assertThat(node.isAlive()).isTrue();
            assertThat(ProcessHandle.of(node.pid())).hasValueSatisfying(p -> assertThat(p.isAlive()).isTrue());
            assertThat(node.commandLine()).contains("-Xms32m -Xmx32m -XX:+UseSerialGC", "--node-id n1");
            assertThat(Readiness.answers200(URI.create(NodeJvm.loopbackUri(http) + "/v0/status"), Duration.ofSeconds(5))).isTrue();

            node.terminate();
            assertThat(node.awaitExit(Duration.ofSeconds(30))).isEqualTo(SIGTERM_STATUS);
            assertThat(node.stdout()).contains("stand-in node n1 serving on " + http);
            assertThat(node.stderr()).isEmpty();
            assertThat(node.describe()).contains("working dir: " + tmp, "exited with status " + SIGTERM_STATUS,
                    "---- stdout (" + tmp.resolve("n1.out") + ")", "---- stderr (" + tmp.resolve("n1.err") + ")");
        } finally {
            node.destroy();
        }
    }

    @Test
    void aJvmThatExitsFailsTheWaitAtOnceWithItsLog() throws Exception {
        Path log = tmp.resolve("n1.log");
        NodeJvm node = standIn("n1").args("--fail-fast").output(log).start();
        assertThatThrownBy(() -> node.awaitReady(Ports.freePort()))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("n1 exited with 3 before it was ready")
                .hasMessageContaining("---- stdout and stderr (" + log + ") ----\nstand-in node: refusing to start on purpose");
        assertThat(node.stdout()).contains("refusing to start on purpose");
        assertThatThrownBy(node::stderr).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aJvmThatIgnoresSigtermIsKilledAfterTheGrace() throws Exception {
        int http = Ports.freePort();
        NodeJvm node = standIn("n1").args(member("n1", http)).args("--ignore-sigterm")
                .output(tmp.resolve("n1.log")).startReady(http);
        node.terminate();
        assertThat(node.awaitExitOrKill(Duration.ofMillis(500))).isTrue();
        assertThat(node.awaitExit(Duration.ZERO)).isEqualTo(SIGKILL_STATUS);
        assertThat(node.stdout()).contains("ignoring SIGTERM");
    }

    @Test
    void withoutInheritedNodeSettingsTheChildSeesExactlyTheGivenVariables() throws Exception {
        int http = Ports.freePort();
        NodeJvm node = standIn("n1").args(member("n1", http)).withoutInheritedNodeSettings()
                .env("KVORUM_B", "2").env("KVORUM_A", "1")
                .output(tmp.resolve("n1.log")).startReady(http);
        try {
            assertThat(node.stdout()).contains("variables: KVORUM_A,KVORUM_B\n");
        } finally {
            assertThat(node.destroy()).isTrue();
        }
    }

    @Test
    void describeShowsTheLastLinesOfALongLogAndSaysHowManyThereWere() throws Exception {
        Path log = tmp.resolve("n1.log");
        NodeJvm node = standIn("n1").args("--lines", Integer.toString(NodeJvm.DESCRIBED_LINES + 100)).output(log).start();
        assertThat(node.awaitExit(Duration.ofSeconds(30))).isZero();
        String described = node.describe();
        assertThat(described).contains("last " + NodeJvm.DESCRIBED_LINES + " of " + (NodeJvm.DESCRIBED_LINES + 100) + " lines",
                "\nline 101\n", "\nline " + (NodeJvm.DESCRIBED_LINES + 100) + "\n").doesNotContain("\nline 100\n");
    }

    @Test
    void theListenerSeesEveryStartedJvm() throws Exception {
        List<NodeJvm> started = new ArrayList<>();
        NodeJvm node = standIn("n1").args("--lines", "1").output(tmp.resolve("n1.log")).whenStarted(started::add).start();
        assertThat(started).containsExactly(node);
        assertThat(node.awaitExit(Duration.ofSeconds(30))).isZero();
    }
}
