package io.kvorum.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/operations.md#backup-and-restore in Docker: the nodes of a 3-node cluster write their parts
 * of a backup to a named volume mounted at the image's {@code /backups}; the cluster is then
 * destroyed (containers and data volumes), a fresh one is started on new, empty volumes with the
 * backup volume mounted, and {@code kvorum-node.jar restore} run in one of its containers loads the
 * backup: every key reads back with its value, and every deleted key stays deleted.
 */
@Timeout(400)
class BackupIT {

    private static final int KEYS = 300;
    private static final Duration BOUND = Duration.ofSeconds(120);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @Test
    void aBackupOnAVolumeRestoresIntoAFreshCluster() throws Exception {
        String volume = clusters.volume("backups");

        KvorumCluster first = clusters.start(KvorumCluster.withNodes(3).volume(volume, "/backups"));
        Map<String, Optional<String>> expected = new TreeMap<>();
        KvorumClient client = first.node("n1").client();
        for (int i = 0; i < KEYS; i++) {
            String key = String.format("backup-it/%04d", i);
            String value = key + "=" + Integer.toHexString(ThreadLocalRandom.current().nextInt());
            client.sync().put(key, value.getBytes(UTF_8));
            expected.put(key, Optional.of(value));
        }
        for (int i = 0; i < KEYS; i += 5) {
            String key = String.format("backup-it/%04d", i);
            client.sync().delete(key);
            expected.put(key, Optional.empty());
        }
        String id = backup(first.node("n2"));
        first.close(); // containers and data volumes gone; the backup volume stays

        KvorumCluster fresh = clusters.start(KvorumCluster.withNodes(3).volume(volume, "/backups"));
        KvorumClient freshClient = fresh.node("n3").client();
        assertThat(freshClient.sync().get("backup-it/0001")).as("a key of the backup in the fresh cluster before "
                + "the restore").isEmpty();
        ClusterNode.Run restore = fresh.node("n1").run(BOUND, "/opt/jre/bin/java", "-jar", "/opt/kvorum/kvorum-node.jar",
                "restore", "/backups/" + id, "http://127.0.0.1:" + ClusterNode.HTTP_PORT);
        assertThat(restore.exit()).as("exit status of the restore:\n%s", restore.output()).isZero();

        Map<String, Optional<String>> read = new TreeMap<>();
        for (String key : expected.keySet()) {
            read.put(key, freshClient.sync().get(key).map(v -> new String(v, UTF_8)));
        }
        assertThat(read).as("the keys read from the fresh cluster after the restore").isEqualTo(expected);
        System.out.printf("[kvorum-it] backup %s restored into a fresh cluster: %d keys, %d deleted%n", id,
                expected.size(), expected.values().stream().filter(Optional::isEmpty).count());
    }

    /** {@code POST /v0/backup} on the node, and its state polled until {@code done}; returns its id. */
    private static String backup(ClusterNode node) throws Exception {
        HttpResponse<String> started = HTTP.send(HttpRequest.newBuilder(URI.create(node.uri() + "/v0/backup"))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(started.statusCode()).as("POST /v0/backup: %s", started.body()).isEqualTo(202);
        String id = JsonParser.parseString(started.body()).getAsJsonObject().get("id").getAsString();
        AtomicReference<JsonObject> state = new AtomicReference<>();
        Await.until("backup " + id + " to be done", BOUND, () -> {
            state.set(state(node, id));
            assertThat(state.get().get("state").getAsString()).as("backup %s: %s", id, state.get()).isNotEqualTo("failed");
            return state.get().get("state").getAsString().equals("done");
        }, () -> String.valueOf(state.get()));
        return id;
    }

    private static JsonObject state(ClusterNode node, String id) {
        try {
            HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(URI.create(node.uri() + "/v0/backup/" + id))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as("GET /v0/backup/%s: %s", id, answer.body()).isEqualTo(200);
            return JsonParser.parseString(answer.body()).getAsJsonObject();
        } catch (IOException e) {
            throw new AssertionError("GET /v0/backup/" + id + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
