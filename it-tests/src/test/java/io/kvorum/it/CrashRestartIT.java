package io.kvorum.it;

import io.kvorum.testkit.History;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every write acknowledged with a quorum survives crashes (SIGKILL) and restarts on the same
 * volume: of each node in turn under load, and of the whole cluster at once. Afterwards every
 * acknowledged key is read back with its value, and the history has no violation.
 */
@Timeout(400)
class CrashRestartIT {

    private static final Duration PROGRESS_BOUND = Duration.ofSeconds(60);

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {3, 5})
    void everyAcknowledgedWriteSurvivesEachNodeCrashingInTurn(int size) {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(size));
        History history = new History();
        try (Workload load = new Workload(cluster, history, 3, Workload.uniquePuts(), size).start()) {
            load.awaitProgress(30, PROGRESS_BOUND);
            for (ClusterNode node : cluster.nodes()) {
                node.kill();
                load.awaitProgress(30, PROGRESS_BOUND); // writes the crashed node misses
                node.start();
                cluster.awaitFullyConnected();
                load.awaitProgress(20, PROGRESS_BOUND);
            }
        }
        Verify.finalReads(cluster, history, Verify.keys(history));
        long acked = Verify.everyAcknowledgedPutSurvived(history);
        Verify.noViolations(history);
        System.out.printf("[kvorum-it] %d nodes crashed in turn: %d acknowledged puts all read back; %s%n",
                size, acked, history.summary());
    }

    @Test
    void everyAcknowledgedWriteSurvivesTheWholeClusterCrashingAtOnce() {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3));
        History history = new History();
        try (Workload load = new Workload(cluster, history, 3, Workload.uniquePuts(), 7).start()) {
            load.awaitProgress(150, PROGRESS_BOUND);
            // No node stops gracefully: whatever was acknowledged must already be in LevelDB's log.
            cluster.nodes().forEach(ClusterNode::kill);
        }
        cluster.startNodes(cluster.nodes());
        cluster.awaitFullyConnected();
        Verify.finalReads(cluster, history, Verify.keys(history));
        long acked = Verify.everyAcknowledgedPutSurvived(history);
        Verify.noViolations(history);
        System.out.printf("[kvorum-it] whole cluster killed under load: %d acknowledged puts all read back; %s%n",
                acked, history.summary());
    }
}
