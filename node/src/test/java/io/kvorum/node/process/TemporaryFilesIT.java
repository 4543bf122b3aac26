package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.clusterMember;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node keeps its files in its data dir: stopping it, gracefully or not, leaves nothing behind in
 * the JVM's temporary directory. leveldbjni used to extract its native library there on every
 * start and never delete it, because a node halts after its shutdown or is killed.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TemporaryFilesIT {

    private static final Duration EXIT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private Path jvmTemp;
    private Path library;
    private int http;
    private List<String> args;

    @BeforeEach
    void setUp() throws IOException {
        jvmTemp = Files.createDirectories(tmp.resolve("jvm-tmp"));
        library = tmp.resolve("data").resolve("native").resolve(System.mapLibraryName("leveldbjni"));
        int[] ports = Ports.freePorts(2);
        http = ports[0];
        args = List.of("--cluster", clusterMember("n1", ports[0], ports[1]), "--data-dir", tmp.resolve("data").toString());
    }

    @Test
    void sigtermAndSigkillLeaveNothingInTheTemporaryDirectory() throws IOException {
        NodeJvm first = start("n1");
        first.terminate();
        assertThat(first.awaitExit(EXIT)).as("exit status after SIGTERM\n%s", first.describe()).isZero();
        assertThat(filesIn(jvmTemp)).as("what a node stopped by SIGTERM left in java.io.tmpdir").isEmpty();
        assertThat(library).as("LevelDB's native library, in the data dir").isRegularFile();
        FileTime placed = Files.getLastModifiedTime(library);

        NodeJvm second = start("n1-again");
        second.kill();

        assertThat(filesIn(jvmTemp)).as("what a node killed by SIGKILL left in java.io.tmpdir").isEmpty();
        assertThat(Files.getLastModifiedTime(library)).as("the library, kept as it was by the second start")
                .isEqualTo(placed);
    }

    @Test
    void aDamagedCopyOfTheLibraryIsReplacedAndTheNodeStarts() throws IOException {
        NodeJvm first = start("n1");
        first.terminate();
        assertThat(first.awaitExit(EXIT)).as("exit status after SIGTERM\n%s", first.describe()).isZero();
        byte[] good = Files.readAllBytes(library);
        Files.write(library, new byte[] {0x7f, 'E', 'L', 'F'}); // cut short, as by a full disk

        NodeJvm second = start("n1-again");
        assertThat(second.isAlive()).as("serving with the library rewritten\n%s", second.describe()).isTrue();
        assertThat(Files.readAllBytes(library)).as("the library in the data dir").isEqualTo(good);
        assertThat(filesIn(jvmTemp)).as("what the node process put in java.io.tmpdir").isEmpty();
    }

    private NodeJvm start(String name) {
        return nodes.launch(name).jvmOptions("-Djava.io.tmpdir=" + jvmTemp).args(args).startReady(http);
    }

    private static List<String> filesIn(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> !p.equals(dir)).map(p -> dir.relativize(p).toString()).collect(Collectors.toList());
        }
    }
}
