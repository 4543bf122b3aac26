package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.clusterMember;
import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#starting-nodes: "SIGKILL loses no acknowledged write: a restarted node with the same {@code --data-dir}
 * serves everything it acknowledged". Each test writes distinct keys with distinct values, kills
 * the node with SIGKILL, restarts it on the same data directory and ports, and reads every key
 * the node had answered {@code 201} for.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CrashRecoveryIT {

    private static final int KEYS = 2000;
    private static final int PARALLELISM = 64;
    /** Bound on one batch of writes or reads being answered; a hang, not a speed limit. */
    private static final Duration ANSWERS = Duration.ofSeconds(90);
    /** A process killed by SIGKILL reports 128 + 9. */
    private static final int KILLED_BY_SIGKILL = 137;

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    @Test
    void sigkillWhileIdleLosesNoAcknowledgedWrite() {
        crashWhileIdle(List.of());
    }

    @Test
    void sigkillWhileIdleWithFsyncLosesNoAcknowledgedWrite() {
        crashWhileIdle(List.of("--fsync"));
    }

    /** Every write has been answered when the node is killed. */
    private void crashWhileIdle(List<String> extraArgs) {
        Node node = new Node(extraArgs);
        NodeJvm first = node.start("n1");
        KvorumClient client = node.client();
        WriteLoad load = new WriteLoad(client, "idle", PARALLELISM, 42);

        load.writeAll(KEYS, ANSWERS);
        assertThat(load.failed()).as("writes a healthy node refused").isEmpty();
        Map<String, byte[]> acknowledged = load.acknowledged();
        assertThat(acknowledged).hasSize(KEYS);

        first.kill();
        assertThat(first.awaitExit(NodeJvm.KILL_TIMEOUT)).as("exit status of the killed node")
                .isEqualTo(KILLED_BY_SIGKILL);

        node.start("n1-restarted");
        Map<String, Optional<byte[]>> read =
                WriteLoad.readAll(node.client(), acknowledged.keySet(), PARALLELISM, ANSWERS);
        assertThat(WriteLoad.mismatches(acknowledged, read))
                .as("acknowledged writes missing or changed after SIGKILL and restart (%d acknowledged)",
                        acknowledged.size())
                .isEmpty();
    }

    /**
     * A writer keeps {@value #PARALLELISM} writes in flight while the node is killed. Every write
     * acknowledged before the kill must be there afterwards; a write that was cut off may be there
     * or not, but if it is there it holds exactly the value that was sent.
     */
    @Test
    void sigkillDuringWritesLosesNoAcknowledgedWrite() {
        Node node = new Node(List.of());
        NodeJvm first = node.start("n1");
        KvorumClient client = node.client();
        WriteLoad load = new WriteLoad(client, "busy", PARALLELISM, 7);

        load.startContinuous();
        Await.until(KEYS + " writes acknowledged, with more in flight", ANSWERS,
                () -> load.acknowledgedCount() >= KEYS && load.inFlight() > 0, first::describe);
        int inFlightAtKill = load.inFlight();
        first.kill();
        load.stop(ANSWERS);
        assertThat(inFlightAtKill).as("writes in flight when SIGKILL was sent").isPositive();
        assertThat(first.awaitExit(NodeJvm.KILL_TIMEOUT)).as("exit status of the killed node")
                .isEqualTo(KILLED_BY_SIGKILL);

        Map<String, byte[]> acknowledged = load.acknowledged();
        Map<String, byte[]> attempted = load.attempted();
        node.start("n1-restarted");
        Map<String, Optional<byte[]>> read =
                WriteLoad.readAll(node.client(), attempted.keySet(), PARALLELISM, ANSWERS);

        assertThat(WriteLoad.mismatches(acknowledged, read))
                .as("acknowledged writes missing or changed after SIGKILL during writes "
                        + "(%d acknowledged, %d in flight at the kill)", acknowledged.size(), inFlightAtKill)
                .isEmpty();
        List<String> torn = new ArrayList<>();
        Map<String, byte[]> cutOff = new HashMap<>(attempted);
        cutOff.keySet().removeAll(acknowledged.keySet());
        cutOff.forEach((key, sent) -> read.get(key).ifPresent(got -> {
            if (!Arrays.equals(got, sent)) {
                torn.add(key + ": read " + got.length + " bytes, sent " + sent.length);
            }
        }));
        assertThat(torn).as("unacknowledged writes that read back as something other than what was sent").isEmpty();
    }

    /** One node's command line; a restart reuses it, so the data directory and ports stay the same. */
    private final class Node {
        final int http;
        final List<String> args = new ArrayList<>();

        Node(List<String> extraArgs) {
            int[] ports = Ports.freePorts(2);
            http = ports[0];
            args.addAll(List.of("--cluster", clusterMember("n1", ports[0], ports[1]),
                    "--data-dir", tmp.resolve("data").toString()));
            args.addAll(extraArgs);
        }

        NodeJvm start(String name) {
            return nodes.launch(name).args(args).startReady(http);
        }

        /** A new client, so that no connection pooled before a restart is reused after it. */
        KvorumClient client() {
            return KvorumClient.create(loopbackUri(http), Duration.ofSeconds(30));
        }
    }
}
