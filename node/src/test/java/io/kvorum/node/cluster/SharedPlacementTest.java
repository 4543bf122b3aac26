package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.placement.Rendezvous;
import io.kvorum.client.placement.ReplicaRouter;
import java.net.URI;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The client routes to the replicas the node stores on: the node's {@link Placement} and the
 * client's {@link Rendezvous} and {@link ReplicaRouter} pick the same members, in the same order,
 * for any key, from the node's own description of its cluster (the body of {@code GET /v0/cluster}).
 */
class SharedPlacementTest {

    private static final int KEYS = 10_000;
    private static final String CLUSTER = "n3=127.0.0.1:8083:9083,n1=127.0.0.1:8081:9081,"
            + "edge-7=127.0.0.1:8087:9087,n2=127.0.0.1:8082:9082,v6=[::1]:8085:9085";

    private static List<String> ids(List<ClusterMember> members) {
        return members.stream().map(ClusterMember::id).toList();
    }

    private static URI httpUri(ClusterMember m) {
        String host = m.host().indexOf(':') >= 0 ? "[" + m.host() + "]" : m.host();
        return URI.create("http://" + host + ":" + m.httpPort());
    }

    /** Random keys of 1 to 64 bytes, any bytes: the same on every run. */
    private static byte[][] randomKeys() {
        Random random = new Random(16);
        byte[][] keys = new byte[KEYS][];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = new byte[1 + random.nextInt(64)];
            random.nextBytes(keys[i]);
        }
        return keys;
    }

    @Test
    void theClientsRendezvousPicksTheNodesReplicasForEveryKey() throws InvalidTopologyException {
        Topology topology = Topology.parse(CLUSTER);
        Placement node = new Placement(topology);
        Rendezvous client = Rendezvous.over(List.of("n2", "v6", "n1", "edge-7", "n3"));
        for (byte[] key : randomKeys()) {
            for (int from = 1; from <= 5; from++) {
                assertThat(client.replicas(key, from)).isEqualTo(ids(node.replicasFor(key, from)));
            }
        }
    }

    @Test
    void theRouterSendsEachKeyToTheNodesReplicasFromTheClusterView() throws InvalidTopologyException {
        Topology topology = Topology.parse(CLUSTER);
        Placement node = new Placement(topology);
        ReplicaRouter router = ReplicaRouter.of(Membership.first("kvorum", topology, 3).view());
        for (byte[] key : randomKeys()) {
            assertThat(router.replicasFor(key))
                    .isEqualTo(node.replicasFor(key, 3).stream().map(SharedPlacementTest::httpUri).toList());
        }
    }
}
