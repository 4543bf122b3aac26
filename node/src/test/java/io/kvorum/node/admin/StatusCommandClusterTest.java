package io.kvorum.node.admin;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvorum.node.cluster.MiniCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code kvorum status} against a real 3-node cluster in this JVM, before and after a node stops. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StatusCommandClusterTest {

    private record Run(int exit, List<String> lines, String err) {}

    @Test
    void followsAStoppedMember() throws Exception {
        MiniCluster.runWithNewCluster(3, Map.of(), c -> {
            String url = c.httpUri("n1").toString();
            // Every peer is up once the cluster serves; polled all the same, as a heartbeat may lag.
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
                    .until(() -> status(url).exit() == StatusCommand.EXIT_ALL_UP);
            Run allUp = status(url);
            assertThat(allUp.exit()).as("exit with every member up; stderr: %s", allUp.err()).isEqualTo(StatusCommand.EXIT_ALL_UP);
            assertThat(allUp.lines().get(0)).startsWith("Kvorum cluster of 3 node(s), replication factor 3, as n1 sees it");
            assertThat(allUp.lines()).anySatisfy(l -> assertThat(l).startsWith("n2").contains("up"))
                    .anySatisfy(l -> assertThat(l).startsWith("n3").contains("up"))
                    .last().asString().startsWith("3 of 3 members up");

            c.stop("n2");

            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
                    .until(() -> status(url).exit() == StatusCommand.EXIT_MEMBER_DOWN);
            Run down = status(url);
            assertThat(down.lines()).anySatisfy(l -> assertThat(l).startsWith("n2").contains("down"))
                    .last().asString().startsWith("2 of 3 members up");
        });
    }

    private static Run status(String url) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = StatusCommand.run(List.of(url), new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8),
                System.currentTimeMillis());
        return new Run(exit, out.toString(UTF_8).lines().toList(), err.toString(UTF_8));
    }
}
