package io.kvorum.client;

import static io.kvorum.client.FakeNode.answer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.client.placement.ReplicaRouter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client that routes to replicas follows the membership its nodes describe (docs/operations.md#growing-and-shrinking-a-cluster): against
 * {@link FakeNode}s that all answer {@code GET /v0/cluster} with the view the test sets, and
 * {@code 201} to every write.
 */
@Timeout(60)
class MembershipFollowingTest {

    private static final Duration REFRESH = Duration.ofMillis(100);

    private final OpenedInTest opened = new OpenedInTest();
    private final AtomicReference<String> membership = new AtomicReference<>();

    @AfterEach
    void closeAll() throws Exception {
        opened.close();
    }

    private <T extends AutoCloseable> T closing(T resource) {
        return opened.add(resource);
    }

    /** A node answering the current {@link #membership}, 201 to writes and 200 to reads. */
    private FakeNode node() throws InterruptedException {
        return closing(FakeNode.start((r, n) -> r.uri().startsWith("/v0/cluster") ? answer(200, membership.get())
                : r.method().name().equals("PUT") ? answer(201, "") : answer(200, "v")));
    }

    private KvorumClient routingClient(FakeNode seed) {
        return closing(KvorumClient.builder().endpoints(seed.uri()).routeToReplicas().membershipRefreshInterval(REFRESH)
                .requestTimeout(Duration.ofMillis(500)).build());
    }

    /**
     * Builder.build(): the seeds are asked "each in turn until one answers, within the request
     * timeout", whatever the retry policy of the calls: three dead seeds before a live one, and no
     * retries at all.
     */
    @Test
    void everySeedGetsItsTurnWhateverTheRetryPolicy() throws Exception {
        FakeNode live = node();
        membership.set(view(1, states(live, "normal")));
        List<URI> seeds = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                seeds.add(URI.create("http://127.0.0.1:" + s.getLocalPort())); // nothing listens there once closed
            }
        }
        seeds.add(live.uri());

        for (RetryPolicy policy : List.of(RetryPolicy.NONE, RetryPolicy.DEFAULT)) {
            KvorumClient kv = closing(KvorumClient.builder().endpoints(seeds.toArray(URI[]::new)).routeToReplicas()
                    .retryPolicy(policy).requestTimeout(Duration.ofSeconds(5)).build());
            assertThat(kv.endpoints()).as("the members the live seed named, with " + policy).containsExactly(live.uri());
        }
    }

    /** The body of {@code GET /v0/cluster}: each node (at 127.0.0.1) with its state, replication factor 1. */
    static String view(long epoch, Map<FakeNode, String> states) {
        String members = states.entrySet().stream()
                .map(e -> "{\"id\":\"n" + e.getKey().port() + "\",\"host\":\"127.0.0.1\",\"http\":" + e.getKey().port()
                        + ",\"grpc\":9090,\"state\":\"" + e.getValue() + "\"}")
                .collect(Collectors.joining(","));
        return "{\"name\":\"kvorum\",\"epoch\":" + epoch + ",\"members\":[" + members + "],\"replicationFactor\":1}";
    }

    static Map<FakeNode, String> states(Object... nodesAndStates) {
        Map<FakeNode, String> m = new LinkedHashMap<>();
        for (int i = 0; i < nodesAndStates.length; i += 2) {
            m.put((FakeNode) nodesAndStates[i], (String) nodesAndStates[i + 1]);
        }
        return m;
    }

    /** {@code count} keys whose single replica under {@code view} is {@code node}. */
    private static List<String> keysPlacedOn(String view, FakeNode node, int count) {
        ReplicaRouter router = ReplicaRouter.of(ClusterView.parse(view));
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < count; i++) {
            if (router.replicasFor("k" + i, 1).get(0).equals(node.uri())) {
                keys.add("k" + i);
            }
        }
        return keys;
    }

    private static List<String> putsSeen(FakeNode node) {
        return node.seen.stream().filter(s -> s.method().equals("PUT"))
                .map(s -> s.uri().substring(s.uri().indexOf("id=") + 3)).toList();
    }

    @Test
    void aMemberThatJoinedGetsTheKeysItIsFirstReplicaOfOnceItIsNormal() throws Exception {
        FakeNode a = node();
        FakeNode b = node();
        membership.set(view(2, states(a, "normal", b, "joining")));
        KvorumClient kv = routingClient(a);
        assertThat(kv.endpoints()).as("a joining member is not routed to").containsExactly(a.uri());

        String joined = view(3, states(a, "normal", b, "normal"));
        membership.set(joined);
        await().atMost(Duration.ofSeconds(10)).until(() -> kv.endpoints().size() == 2);
        assertThat(kv.endpoints()).containsExactlyInAnyOrder(a.uri(), b.uri());
        assertThat(kv.membership()).hasValueSatisfying(v -> assertThat(v.epoch()).isEqualTo(3));

        List<String> keysOfB = keysPlacedOn(joined, b, 20);
        for (String key : keysOfB) {
            kv.sync().put(key, "v".getBytes(UTF_8));
        }
        assertThat(putsSeen(b)).as("each write went to its replica").containsExactlyElementsOf(keysOfB);
        assertThat(putsSeen(a)).isEmpty();
    }

    @Test
    void aMemberThatIsLeavingGetsNoNewRequestsAndItsConnectionsClose() throws Exception {
        FakeNode a = node();
        FakeNode b = node();
        String both = view(3, states(a, "normal", b, "normal"));
        membership.set(both);
        KvorumClient kv = routingClient(a);
        List<String> keysOfB = keysPlacedOn(both, b, 10);
        for (String key : keysOfB) {
            kv.sync().put(key, "v".getBytes(UTF_8));
        }
        assertThat(putsSeen(b)).hasSize(10);
        assertThat(b.openConnections.get()).isPositive();

        membership.set(view(5, states(a, "normal", b, "leaving")));
        await().atMost(Duration.ofSeconds(10)).until(() -> kv.endpoints().equals(List.of(a.uri())));
        for (String key : keysOfB) {
            kv.sync().put(key, "v".getBytes(UTF_8));
        }
        assertThat(putsSeen(b)).as("no write after the client followed the change").hasSize(10);
        assertThat(putsSeen(a)).containsExactlyElementsOf(keysOfB);
        await("the left member's connections close after a request timeout").atMost(Duration.ofSeconds(10))
                .until(() -> b.openConnections.get() == 0);
    }

    @Test
    void anOlderEpochFromANodeThatMissedAChangeIsIgnored() throws Exception {
        FakeNode a = node();
        FakeNode b = node();
        membership.set(view(4, states(a, "normal", b, "normal")));
        KvorumClient kv = routingClient(a);

        membership.set(view(3, states(a, "normal")));
        int asked = clusterReads(a) + clusterReads(b);
        await().atMost(Duration.ofSeconds(10)).until(() -> clusterReads(a) + clusterReads(b) >= asked + 3);
        assertThat(kv.endpoints()).containsExactlyInAnyOrder(a.uri(), b.uri());
        assertThat(kv.membership()).hasValueSatisfying(v -> assertThat(v.epoch()).isEqualTo(4));
    }

    private static int clusterReads(FakeNode node) {
        return (int) node.seen.stream().filter(s -> s.uri().startsWith("/v0/cluster")).count();
    }
}
