package io.kvorum.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.History.Op;
import io.kvorum.testkit.History.Outcome;
import io.kvorum.testkit.History;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rolling restart (SIGTERM, start on the same volume, wait until the cluster is whole, next
 * node) under a steady client load that sends to every node in turn, the restarting one included.
 * No acknowledged write is lost, each node exits 0, and requests fail only while a node is down:
 * every failure overlaps a node's down window (from its SIGTERM until the cluster is whole again)
 * and was sent to that very node; through the live nodes, every request succeeds.
 */
@Timeout(400)
class RollingRestartIT {

    private static final Duration PROGRESS_BOUND = Duration.ofSeconds(60);

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    /** A node's down window, in nanoTime. */
    private record Window(String node, long from, long to) {
        boolean overlaps(Op op) {
            return op.invokeNanos() <= to && op.completeNanos() >= from;
        }
    }

    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {3, 5})
    void rollingRestartLosesNoAcknowledgedWriteAndFailsOnlyWhileANodeIsDown(int size) {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(size));
        History history = new History();
        List<Window> windows = new ArrayList<>();
        try (Workload load = new Workload(cluster, history, 3, Workload.uniquePuts(), 11 * size).start()) {
            load.awaitProgress(30, PROGRESS_BOUND);
            for (ClusterNode node : cluster.nodes()) {
                long down = System.nanoTime();
                assertThat(node.stop()).as("exit code of %s after SIGTERM", node.id()).isZero();
                load.awaitProgress(20, PROGRESS_BOUND);
                node.start();
                cluster.awaitFullyConnected();
                windows.add(new Window(node.id(), down, System.nanoTime()));
                load.awaitProgress(30, PROGRESS_BOUND);
            }
        }
        List<Op> requests = history.ops();
        Verify.finalReads(cluster, history, Verify.keys(history));
        long acked = Verify.everyAcknowledgedPutSurvived(history);
        Verify.noViolations(history);

        List<Op> failures = requests.stream().filter(o -> o.outcome() != Outcome.OK).toList();
        List<Op> outside = failures.stream().filter(o -> windows.stream().noneMatch(w -> w.overlaps(o))).toList();
        long viaDownNode = failures.stream()
                .filter(o -> windows.stream().anyMatch(w -> w.overlaps(o) && w.node().equals(o.node()))).count();
        long viaLiveNodes = failures.size() - outside.size() - viaDownNode;
        System.out.printf("[kvorum-it] rolling restart of %d nodes: %d requests, %d failed (%d sent to the node that "
                        + "was down, %d through live nodes while one was down, %d outside any down window); "
                        + "%d acknowledged puts all read back%n",
                size, requests.size(), failures.size(), viaDownNode, viaLiveNodes, outside.size(), acked);
        assertThat(outside).as("requests that failed while every node was up").isEmpty();
        // With one node down a majority is still up, so only requests sent to the down node may fail.
        assertThat(viaLiveNodes).as("requests through live nodes that failed while one node was down").isZero();
    }
}
