package io.kvorum.perf.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.testkit.StandInNode;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** LocalCluster against testkit's {@link StandInNode} processes, so it runs without the node jar. */
@Timeout(60)
class LocalClusterTest {

    @TempDir
    static Path jarDir;
    static Path standInJar;

    /** A jar whose Main-Class is StandInNode, loaded from where testkit's classes are. */
    @BeforeAll
    static void buildStandInJar() throws Exception {
        Path classes = Path.of(StandInNode.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, StandInNode.class.getName());
        manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, classes.toUri().toString());
        standInJar = jarDir.resolve("stand-in-node.jar");
        try (OutputStream out = Files.newOutputStream(standInJar); JarOutputStream jar = new JarOutputStream(out, manifest)) {
            jar.flush();
        }
    }

    @Test
    void startsEveryNodeReadyAndStopsThemAndDeletesTheirData(@TempDir Path runDir) throws Exception {
        LocalCluster.Spec spec = new LocalCluster.Spec(3, standInJar, "64m", List.of("-XX:+UseSerialGC"), List.of("--fsync"), runDir);
        List<ProcessHandle> processes;
        Path dataDir;
        try (LocalCluster cluster = LocalCluster.start(spec)) {
            assertThat(cluster.ids()).containsExactly("n1", "n2", "n3");
            assertThat(cluster.httpUris()).hasSize(3).doesNotHaveDuplicates().first().isEqualTo(cluster.coordinator());
            HttpClient http = HttpClient.newHttpClient();
            for (URI uri : cluster.httpUris()) {
                HttpResponse<String> status = http.send(HttpRequest.newBuilder(uri.resolve("/v0/status")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(status.statusCode()).isEqualTo(200);
            }
            assertThat(cluster.commandLines().get(1))
                    .contains("-Xms64m -Xmx64m -XX:+AlwaysPreTouch", "-XX:+DebugNonSafepoints", "-Xlog:gc*:file=" + runDir.toAbsolutePath().resolve("gc-n2.log") + ":time,uptime,level,tags ",
                            "-XX:+UseSerialGC", "--node-id n2", "--fsync", "-jar " + standInJar.toAbsolutePath())
                    .containsPattern("--cluster n1=127\\.0\\.0\\.1:\\d+:\\d+,n2=127\\.0\\.0\\.1:\\d+:\\d+,n3=127\\.0\\.0\\.1:\\d+:\\d+");
            String cmd = cluster.commandLines().get(0);
            dataDir = Path.of(cmd.substring(cmd.indexOf("--data-dir ") + "--data-dir ".length()).split(" ")[0]).getParent();
            processes = cluster.ids().stream().map(id -> ProcessHandle.of(cluster.pid(id)).orElseThrow()).toList();
            assertThat(processes).allMatch(ProcessHandle::isAlive);
            assertThat(runDir.resolve("n1.log")).exists();
        }
        assertThat(processes).noneMatch(ProcessHandle::isAlive);
        assertThat(dataDir).doesNotExist();
    }

    @Test
    void aJoiningNodeStartsWithJoinAndItsOwnEntryAndTheFirstMemberAndStopsWithTheRest(@TempDir Path runDir) throws Exception {
        LocalCluster.Spec spec = new LocalCluster.Spec(2, standInJar, "64m", List.of("-XX:+UseSerialGC"), List.of(), runDir);
        ProcessHandle joiner;
        try (LocalCluster cluster = LocalCluster.start(spec)) {
            String id = cluster.join();

            assertThat(id).isEqualTo("n3");
            assertThat(cluster.ids()).containsExactly("n1", "n2", "n3");
            String n1Entry = cluster.commandLines().get(0).replaceAll(".*--cluster (n1=[^,]+),.*", "$1");
            assertThat(cluster.commandLines().get(2)).contains("--node-id n3", "--join")
                    .containsPattern("--cluster n3=127\\.0\\.0\\.1:\\d+:\\d+," + n1Entry.replace(".", "\\.") + " ");
            HttpResponse<String> status = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(cluster.httpUri("n3").resolve("/v0/status")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(status.statusCode()).isEqualTo(200);
            assertThat(cluster.logOf("n3")).exists();
            joiner = ProcessHandle.of(cluster.pid("n3")).orElseThrow();
        }
        assertThat(joiner.isAlive()).isFalse();
    }

    @Test
    void aNodeThatExitsFailsTheStartWithTheTailOfItsLog(@TempDir Path runDir) {
        LocalCluster.Spec spec = new LocalCluster.Spec(1, standInJar, "64m", List.of(), List.of("--fail-fast"), runDir);
        assertThatThrownBy(() -> LocalCluster.start(spec))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("n1 exited with 3")
                .hasMessageContaining("refusing to start on purpose");
    }

    @Test
    void aMissingJarIsRefusedBeforeAnythingStarts(@TempDir Path runDir) {
        LocalCluster.Spec spec = new LocalCluster.Spec(1, runDir.resolve("nope.jar"), "64m", List.of(), List.of(), runDir);
        assertThatThrownBy(() -> LocalCluster.start(spec)).isInstanceOf(IOException.class).hasMessageContaining("node jar not found");
    }

    @Test
    void nodesRunZgcUnlessTheirOptionsChooseACollector() {
        assertThat(LocalCluster.choosesCollector(List.of("-XX:+AlwaysPreTouch", "-Xmx1g"))).isFalse();
        assertThat(LocalCluster.choosesCollector(List.of("-XX:+UseG1GC"))).isTrue();
        assertThat(LocalCluster.choosesCollector(List.of("-XX:+UseZGC", "-XX:+ZGenerational"))).isTrue();
        assertThat(LocalCluster.choosesCollector(List.of("-XX:+UseSerialGC"))).isTrue();
    }
}
