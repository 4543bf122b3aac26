package io.kvorum.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.client.placement.ReplicaRouter;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EndpointSelectorTest {

    private static final ClusterView VIEW = new ClusterView("kvorum", 1, List.of(
            new ClusterView.Member("n1", "127.0.0.1", 8080, 9080, ClusterView.Member.NORMAL),
            new ClusterView.Member("n2", "127.0.0.1", 8081, 9081, ClusterView.Member.NORMAL),
            new ClusterView.Member("n3", "127.0.0.1", 8082, 9082, ClusterView.Member.NORMAL)), 2);
    private static final ReplicaRouter ROUTER = ReplicaRouter.of(VIEW);
    private static final List<URI> ALL = VIEW.members().stream().map(m -> m.httpUri("http")).toList();

    @Test
    void replicasFirstPicksTheKeysFirstReplicaThenItsSecond() {
        EndpointSelector selector = EndpointSelector.replicasFirst(ROUTER);
        Set<URI> chosen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            byte[] key = ("k" + i).getBytes(UTF_8);
            List<URI> replicas = ROUTER.replicasFor(key);
            URI first = selector.select(key, ALL);
            assertThat(first).as("key k%d", i).isEqualTo(replicas.get(0));
            chosen.add(first);

            List<URI> withoutFirst = new ArrayList<>(ALL);
            withoutFirst.remove(replicas.get(0));
            assertThat(selector.select(key, withoutFirst)).as("key k%d, first replica down", i).isEqualTo(replicas.get(1));
        }
        assertThat(chosen).as("keys spread over the members").containsExactlyInAnyOrderElementsOf(ALL);
    }

    @Test
    void withNoReplicaAmongTheCandidatesOrNoKeyItGoesRoundRobin() {
        EndpointSelector selector = EndpointSelector.replicasFirst(ROUTER);
        byte[] key = "k1".getBytes(UTF_8);
        List<URI> others = new ArrayList<>(ALL);
        others.removeAll(ROUTER.replicasFor(key));
        assertThat(others).hasSize(1);
        assertThat(selector.select(key, others)).isEqualTo(others.get(0));

        Set<URI> keyless = new HashSet<>();
        for (int i = 0; i < ALL.size(); i++) {
            keyless.add(selector.select(null, ALL));
        }
        assertThat(keyless).containsExactlyInAnyOrderElementsOf(ALL);
    }
}
