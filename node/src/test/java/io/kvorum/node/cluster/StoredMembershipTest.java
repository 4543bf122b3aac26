package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.KvorumNode;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.Ports;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#growing-and-shrinking-a-cluster on a real node: {@code --cluster} seeds the membership in the data dir on the first
 * start; a restart with other options serves the stored one; a node that the stored membership
 * does not name, or whose stored membership is damaged, does not start.
 */
class StoredMembershipTest {

    @TempDir
    Path dir;

    private static String entry(String id) {
        int[] ports = Ports.freePorts(2);
        return id + "=127.0.0.1:" + ports[0] + ":" + ports[1];
    }

    private static ClusterView cluster(TestNode node) {
        return ClusterView.parse(new String(node.get("/v0/cluster").body(), StandardCharsets.UTF_8));
    }

    @Test
    void aRestartWithOtherOptionsServesTheStoredMembership() throws Exception {
        String first = entry("n1");
        ClusterView seeded;
        try (TestNode node = TestNode.start(dir, Map.of(NodeOption.CLUSTER, first, NodeOption.CLUSTER_NAME, "prod"))) {
            seeded = cluster(node);
            assertThat(seeded.name()).isEqualTo("prod");
            assertThat(seeded.members()).extracting(ClusterView.Member::id).containsExactly("n1");
        }

        try (TestNode node = TestNode.start(dir, Map.of(NodeOption.CLUSTER, first + "," + entry("n2"),
                NodeOption.NODE_ID, "n1", NodeOption.CLUSTER_NAME, "test"))) {
            assertThat(cluster(node)).as("the stored membership wins over --cluster and --cluster-name").isEqualTo(seeded);
            assertThat(node.node().config().topology().size()).as("and is what the node runs with").isEqualTo(1);
            assertThat(node.node().config().clusterName()).isEqualTo("prod");
        }
    }

    @Test
    void aNodeTheStoredMembershipDoesNotNameOrADamagedMembershipDoesNotStart() throws Exception {
        try (TestNode node = TestNode.start(dir, Map.of(NodeOption.CLUSTER, entry("n1")))) {
            assertThat(cluster(node).members()).hasSize(1);
        }

        assertThatThrownBy(() -> TestNode.start(dir, Map.of(NodeOption.CLUSTER, entry("n2"))))
                .isInstanceOf(KvorumNode.StartupException.class)
                .hasMessageContaining("node n2 is not a member of the stored membership")
                .hasMessageContaining("empty its data dir and start it with --join");

        Path file = dir.resolve("node").resolve(MembershipStore.FILE_NAME);
        Files.writeString(file, "{\"name\":");
        assertThatThrownBy(() -> TestNode.start(dir, Map.of(NodeOption.CLUSTER, entry("n1"))))
                .isInstanceOf(KvorumNode.StartupException.class)
                .hasMessageContaining("damaged");
        assertThat(Files.readString(file)).isEqualTo("{\"name\":");
    }
}
