package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.PrometheusText;
import io.kvorum.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#tombstones-and-repair, with node processes: a replica down for longer than
 * {@code --tombstone-grace} does not bring a deleted value back. Three nodes with a 2 s grace
 * (hints live 0.5 s, so the delete's hint for n3 is dropped before n3 is back): the delete misses
 * n3; n1 and n2 keep their tombstones past the grace while n3 is down; once n3 is back, repair on
 * every node leaves the key deleted through each of them, and the tombstones are purged
 * everywhere afterwards with the key still deleted.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TombstoneGcIT {

    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final int N1 = 0;
    private static final int N2 = 1;
    private static final int N3 = 2;
    private static final String KEY = "deleted-while-n3-was-down";

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void aReplicaDownForLongerThanTheGraceDoesNotBringADeletedValueBack() {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 3, "--tombstone-grace", "2000",
                "--hint-max-age", "500", "--purge-interval", "200", "--anti-entropy-interval", "500");
        cluster.startAllReady();
        // Every peer must have seen the others up first: until then a write to all three may answer 504.
        Await.until("a PUT to all three replicas to answer 201", BOUND,
                () -> send(cluster.entity(N1, KEY, "ack=3&from=3"), "PUT", "the value").statusCode() == 201,
                cluster::describe);
        cluster.stop(N3);
        assertThat(send(cluster.entity(N1, KEY, "ack=2&from=3"), "DELETE", null).statusCode()).isEqualTo(202);

        for (int node : new int[] {N1, N2}) {
            Await.until("n" + (node + 1) + " to have purged or held back its tombstone past the grace", BOUND,
                    () -> tombstones(cluster, node, "held_back") + tombstones(cluster, node, "purged_total") > 0,
                    cluster::describe);
        }
        cluster.startReady(N3);
        for (int node = 0; node < 3; node++) {
            URI repair = URI.create(loopbackUri(cluster.http(node)) + "/v0/repair");
            Await.until("POST /v0/repair on n" + (node + 1) + " to answer 200", BOUND,
                    () -> send(repair, "POST", null).statusCode() == 200, cluster::describe);
        }
        assertDeletedThroughEveryNode(cluster);

        for (int node = 0; node < 3; node++) {
            int n = node;
            Await.until("n" + (node + 1) + " to have purged its tombstone and to hold none back", BOUND,
                    () -> tombstones(cluster, n, "purged_total") > 0 && tombstones(cluster, n, "held_back") == 0,
                    cluster::describe);
        }
        assertDeletedThroughEveryNode(cluster);
    }

    /** A read of every replica's version (ack=3 of 3) through each node answers 404. */
    private void assertDeletedThroughEveryNode(ProcessCluster cluster) {
        for (int node = 0; node < 3; node++) {
            HttpResponse<String> get = send(cluster.entity(node, KEY, "ack=3&from=3"), "GET", null);
            assertThat(get.statusCode()).as("GET through n%d: %s", node + 1, get.body()).isEqualTo(404);
        }
    }

    /** {@code kvorum_tombstones_<name>} on the node. */
    private double tombstones(ProcessCluster cluster, int node, String name) {
        HttpResponse<String> metrics = send(URI.create(loopbackUri(cluster.http(node)) + "/metrics"), "GET", null);
        return PrometheusText.parse(metrics.body()).sum("kvorum_tombstones_" + name, Map.of());
    }

    private HttpResponse<String> send(URI uri, String method, String body) {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError(method + " " + uri + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
