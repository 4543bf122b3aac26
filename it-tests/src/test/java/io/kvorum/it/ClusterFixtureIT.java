package io.kvorum.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.client.KvorumException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fixture's faults do what they say, so that a green scenario means something: a killed node
 * is gone and comes back with its data, a wiped one comes back empty, a paused one is frozen, a
 * partitioned one is cut from its peers but not from the test.
 */
@Timeout(300)
class ClusterFixtureIT {

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    private static final Options ALL = Options.quorum(3, 3);

    @Test
    void killAndStartKeepTheVolumeAndWipeEmptiesIt() {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3));
        ClusterNode n1 = cluster.node("n1");
        n1.client().put("kept", "v".getBytes(UTF_8), ALL).join();

        for (ClusterNode n : cluster.nodes()) {
            n.kill();
            assertThat(n.exitCode()).as("exit code of %s after SIGKILL", n.id()).isEqualTo(137);
            assertThat(n.isServing()).isFalse();
        }
        cluster.startNodes(cluster.nodes());
        cluster.awaitFullyConnected();
        // Every replica was killed, so the value can only come from the volumes kept across the restart.
        assertThat(n1.client().get("kept", ALL).join()).hasValueSatisfying(v -> assertThat(new String(v, UTF_8)).isEqualTo("v"));

        for (ClusterNode n : cluster.nodes()) {
            assertThat(n.stop()).as("exit code of %s after SIGTERM", n.id()).isZero();
            n.wipe();
        }
        cluster.startNodes(cluster.nodes());
        cluster.awaitFullyConnected();
        assertThat(n1.client().get("kept", ALL).join()).as("after every volume was wiped").isEmpty();
        assertThat(n1.logs()).as("logs survive a wipe").contains("node n1 stopped").contains("node n1 serving HTTP");
    }

    @Test
    void aPausedNodeIsFrozenAndAPartitionedOneIsCutFromItsPeersOnly() {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3));
        ClusterNode n1 = cluster.node("n1");
        KvorumClient viaN2 = cluster.node("n2").client();

        n1.pause();
        assertThat(n1.isServing()).as("a paused node answers nothing").isFalse();
        assertNotEnoughReplicas(() -> viaN2.put("k", new byte[1], ALL).join());
        n1.unpause();
        cluster.awaitFullyConnected();

        n1.disconnect();
        assertThat(n1.isServing()).as("a partitioned node still answers the test").isTrue();
        assertNotEnoughReplicas(() -> viaN2.put("k", new byte[1], ALL).join());
        assertNotEnoughReplicas(() -> n1.client().put("k", new byte[1], Options.quorum(2, 3)).join());
        viaN2.put("k", new byte[1], Options.quorum(2, 3)).join();
        n1.reconnect();
        cluster.awaitFullyConnected();
        viaN2.put("k", new byte[1], ALL).join();
    }

    private static void assertNotEnoughReplicas(Runnable request) {
        assertThatThrownBy(request::run).isInstanceOf(CompletionException.class)
                .cause().isInstanceOf(KvorumException.class)
                .satisfies(e -> assertThat(((KvorumException) e).status()).isEqualTo(504))
                .hasMessageContaining("Not Enough Replicas");
    }
}
