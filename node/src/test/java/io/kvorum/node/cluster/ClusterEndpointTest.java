package io.kvorum.node.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.placement.ClusterView;
import io.kvorum.client.placement.ReplicaRouter;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.PrometheusText;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code GET /v0/cluster} on running nodes (docs/operations.md#growing-and-shrinking-a-cluster): every node describes the members it was
 * started with, and a client routing by that description sends each key to the replicas the nodes
 * place it on.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterEndpointTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static HttpResponse<String> send(URI node, String method) throws IOException, InterruptedException {
        return send(node, "/v0/cluster", method);
    }

    private static HttpResponse<String> send(URI node, String path, String method) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(node + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString(UTF_8));
    }

    /** The JSON docs/http-api.md specifies, written out from the members the cluster was configured with. */
    private static String expectedJson(MiniCluster cluster, int replicationFactor) {
        StringBuilder json = new StringBuilder("{\"name\":\"kvorum\",\"epoch\":1,\"members\":[");
        for (String id : cluster.ids()) {
            ClusterMember m = cluster.member(id);
            json.append(id.equals(cluster.ids().get(0)) ? "" : ",")
                    .append("{\"id\":\"").append(id).append("\",\"host\":\"").append(m.host())
                    .append("\",\"http\":").append(m.httpPort()).append(",\"grpc\":").append(m.grpcPort())
                    .append(",\"state\":\"normal\"}");
        }
        return json.append("],\"replicationFactor\":").append(replicationFactor).append("}\n").toString();
    }

    @Test
    void everyNodeDescribesTheConfiguredMembersAndRefusesOtherMethods() throws Exception {
        MiniCluster.runWithNewCluster(MiniCluster.SIMULATED, 3, Map.of(NodeOption.REPLICATION_FACTOR, "2"), cluster -> {
            assertThat(cluster.ids()).containsExactly("n1", "n2", "n3");
            for (String id : cluster.ids()) {
                HttpResponse<String> answer = send(cluster.httpUri(id), "GET");
                assertThat(answer.statusCode()).as("GET /v0/cluster on %s", id).isEqualTo(200);
                assertThat(answer.headers().firstValue("content-type")).hasValue("application/json");
                assertThat(answer.body()).as("GET /v0/cluster on %s", id).isEqualTo(expectedJson(cluster, 2));

                HttpResponse<String> refused = send(cluster.httpUri(id), "POST");
                assertThat(refused.statusCode()).as("POST /v0/cluster on %s", id).isEqualTo(405);
                assertThat(refused.headers().firstValue("allow")).hasValue("GET, HEAD");
            }
        });
    }

    @Test
    void aClientRoutingByTheDescriptionFindsEachKeysReplicas() throws Exception {
        MiniCluster.runWithNewCluster(MiniCluster.SIMULATED, 3, Map.of(NodeOption.REPLICATION_FACTOR, "2"), cluster -> {
            ReplicaRouter router = ReplicaRouter.of(ClusterView.parse(send(cluster.httpUri("n2"), "GET").body()));
            for (int i = 0; i < 1000; i++) {
                String key = "user:" + i;
                List<URI> nodesReplicas = cluster.replicasOf(key, 2).stream().map(cluster::httpUri).toList();
                assertThat(router.replicasFor(key.getBytes(UTF_8))).as(key).isEqualTo(nodesReplicas);
            }
        });
    }

    /**
     * A client built with {@code routeToReplicas()} from one seed talks to every member and sends
     * each write to the key's first replica, which coordinates it: each node coordinates exactly the
     * writes of the keys it is first replica of ({@code kvorum_requests_total} on each node).
     */
    @Test
    void aRoutingClientLetsEachKeysFirstReplicaCoordinateIt() throws Exception {
        MiniCluster.runWithNewCluster(MiniCluster.SIMULATED, 3, Map.of(NodeOption.REPLICATION_FACTOR, "2"), cluster -> {
            Map<String, Integer> firstReplicaOf = new java.util.TreeMap<>();
            try (KvorumClient client = KvorumClient.builder().endpoints(cluster.httpUri("n2")).routeToReplicas().build()) {
                assertThat(client.endpoints()).containsExactlyInAnyOrderElementsOf(
                        cluster.ids().stream().map(cluster::httpUri).toList());
                for (int i = 0; i < 300; i++) {
                    String key = "routed:" + i;
                    client.sync().put(key, "v".getBytes(UTF_8));
                    firstReplicaOf.merge(cluster.replicasOf(key, 2).get(0), 1, Integer::sum);
                }
            }
            assertThat(firstReplicaOf).as("every node is first replica of some keys").hasSize(3);
            for (String id : cluster.ids()) {
                double coordinated = PrometheusText.parse(send(cluster.httpUri(id), "/metrics", "GET").body())
                        .sum("kvorum_requests_total", Map.of("op", "put", "code", "201"));
                assertThat(coordinated).as("PUTs coordinated by %s", id).isEqualTo(firstReplicaOf.get(id).doubleValue());
            }
        });
    }

    /**
     * A routing client follows a join (docs/operations.md#growing-and-shrinking-a-cluster): it reads the newer epoch within its refresh
     * interval and from then on the new member coordinates the writes of the keys it is first
     * replica of, and no others ({@code kvorum_requests_total} on the new member).
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aRoutingClientFollowsAJoin() throws Exception {
        MiniCluster.runWithNewCluster(MiniCluster.SIMULATED, 2, Map.of(NodeOption.REPLICATION_FACTOR, "2"), cluster -> {
            try (KvorumClient client = KvorumClient.builder().endpoints(cluster.httpUri("n1")).routeToReplicas()
                    .membershipRefreshInterval(Duration.ofMillis(200)).build()) {
                assertThat(client.endpoints()).hasSize(2);
                String joined = cluster.join(List.of("n1"));
                URI joinedUri = cluster.httpUri(joined);
                Awaitility.await("the client routes to " + joined).atMost(Duration.ofSeconds(60))
                        .until(() -> client.endpoints().contains(joinedUri));
                ReplicaRouter router = ReplicaRouter.of(client.membership().orElseThrow());
                int firstOnJoined = 0;
                for (int i = 0; i < 300; i++) {
                    String key = "followed:" + i;
                    client.sync().put(key, "v".getBytes(UTF_8));
                    firstOnJoined += router.replicasFor(key, 2).get(0).equals(joinedUri) ? 1 : 0;
                }
                double coordinated = PrometheusText.parse(send(joinedUri, "/metrics", "GET").body())
                        .sum("kvorum_requests_total", Map.of("op", "put", "code", "201"));
                assertThat(firstOnJoined).as("keys placed first on the new member").isPositive();
                assertThat(coordinated).as("PUTs coordinated by " + joined).isEqualTo(firstOnJoined);
            }
        });
    }
}
