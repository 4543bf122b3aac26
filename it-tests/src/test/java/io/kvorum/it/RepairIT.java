package io.kvorum.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replacing a disk (docs/operations.md#replacing-a-disk): a node whose disk was lost is started on
 * its empty data dir and nothing else is done. Until it has rebuilt its copies it never answers a
 * read of a key it lost as absent (a first-replica read of it answers 504); then it holds
 * everything again, without {@code POST /v0/repair}, which still answers 200 afterwards. Periodic
 * anti-entropy is off, and the checks read the node's own data ({@link OwnedKeys}), so only the
 * rebuild can make them pass.
 */
@Timeout(300)
class RepairIT {

    private static final int KEYS = 60;
    private static final Duration REBUILT_WITHIN = Duration.ofSeconds(120);
    /** What a first-replica read gives for a first replica that refused it (a rebuilding node). */
    private static final String REFUSED = "504";

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @Test
    void aWipedNodeGetsEverythingBackByItself() throws Exception {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3).env("KVORUM_ANTI_ENTROPY_INTERVAL", "0"));
        KvorumClient viaN1 = cluster.node("n1").client();
        List<String> keys = IntStream.range(0, KEYS).mapToObj(i -> "repair-" + i).toList();
        List<String> values = new ArrayList<>();
        for (String key : keys) {
            viaN1.put(key, (key + "=v").getBytes(UTF_8), Options.quorum(3, 3)).join(); // on every replica
            values.add(key + "=v");
        }

        ClusterNode n3 = cluster.node("n3");
        assertThat(n3.stop()).isZero();
        n3.wipe();
        n3.start();
        cluster.awaitFullyConnected();
        List<String> before = OwnedKeys.firstReplicaValues(cluster.node("n1"), keys, REFUSED);
        for (int i = 0; i < KEYS; i++) {
            assertThat(before.get(i)).as("%s right after the wiped n3 started: never absent", keys.get(i))
                    .isIn(REFUSED, values.get(i));
        }

        Await.until("n3 to hold every key again by itself", REBUILT_WITHIN,
                () -> OwnedKeys.firstReplicaValues(cluster.node("n1"), keys, REFUSED).equals(values),
                () -> "first-replica values: " + OwnedKeys.firstReplicaValues(cluster.node("n1"), keys, REFUSED));

        HttpResponse<String> repair = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(n3.uri() + "/v0/repair")).timeout(Duration.ofSeconds(120))
                        .POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        System.out.printf("[kvorum-it] POST /v0/repair on n3 answered %d: %s%n", repair.statusCode(), repair.body());
        assertThat(repair.statusCode()).as("POST /v0/repair answered: %s", repair.body()).isEqualTo(200);
    }
}
