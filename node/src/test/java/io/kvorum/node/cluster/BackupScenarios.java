package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.node.backup.BackupFileReader;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Cluster backups (docs/operations.md#backup-and-restore): {@code POST /v0/backup} on any member
 * has every member write a snapshot; the union of the snapshots holds every write acknowledged
 * before the {@code 202}; one backup at a time; a member down refuses it, and a member killed
 * mid-way fails it, also once that member is back.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
abstract class BackupScenarios extends ClusterScenarioSupport {

    private static final Duration DONE_WITHIN = Duration.ofSeconds(60);

    BackupScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    private static JsonObject json(Answer a) {
        return JsonParser.parseString(a.body()).getAsJsonObject();
    }

    private static String startBackup(MiniCluster c, String via) throws Exception {
        Answer started = raw(c, via, "POST", "/v0/backup", null);
        assertThat(started.status()).as("POST /v0/backup: %s", started.body()).isEqualTo(202);
        String id = json(started).get("id").getAsString();
        assertThat(BackupManifest.isBackupId(id)).isTrue();
        assertThat(json(started).getAsJsonArray("members")).hasSize(c.size());
        return id;
    }

    private static JsonObject awaitState(MiniCluster c, String via, String id, String state) {
        JsonObject[] last = new JsonObject[1];
        within(DONE_WITHIN).until(() -> {
            Answer a = raw(c, via, "GET", "/v0/backup/" + id, null);
            assertThat(a.status()).as("GET /v0/backup/%s: %s", id, a.body()).isEqualTo(200);
            last[0] = json(a);
            return last[0].get("state").getAsString().equals(state);
        });
        return last[0];
    }

    /** The newest record of each key in the union of the members' parts, each checked against its manifest. */
    private static Map<String, Record> union(MiniCluster c, String id) throws IOException {
        Map<String, Record> out = new HashMap<>();
        for (String node : c.ids()) {
            Path member = c.config(node).backupDir().resolve(id).resolve(node);
            for (BackupManifest.FileEntry f : BackupManifest.verify(member).files()) {
                try (BackupFileReader reader = BackupFileReader.open(member.resolve(f.name()))) {
                    for (Entry e; (e = reader.next()) != null; ) {
                        out.merge(new String(e.key(), StandardCharsets.UTF_8), e.record(), Record::newest);
                    }
                }
            }
        }
        return out;
    }

    @Test
    void theSnapshotsHoldEveryWriteAcknowledgedBeforeThe202() throws Exception {
        withCluster(3, c -> {
            KvorumClient client = c.client("n1");
            List<String> acked = new CopyOnWriteArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = new Thread(() -> {
                for (int i = 0; !stop.get(); i++) {
                    String key = "bk-" + i;
                    if (put(client, key, "v-" + i, q(2, 3)).status() == Answer.CREATED) {
                        acked.add(key);
                    }
                }
            });
            writer.start();
            String id;
            List<String> before;
            try {
                within(Duration.ofSeconds(30)).until(() -> acked.size() >= 300);
                before = List.copyOf(acked); // acknowledged before the POST was even sent
                id = startBackup(c, "n2");
                JsonObject done = awaitState(c, "n2", id, "done");
                for (String node : c.ids()) {
                    JsonObject part = done.getAsJsonObject("members").getAsJsonObject(node);
                    assertThat(part.get("state").getAsString()).isEqualTo("done");
                    assertThat(part.get("records").getAsLong()).isPositive();
                }
            } finally {
                stop.set(true);
                writer.join();
            }
            Map<String, Record> union = union(c, id);
            for (String key : before) {
                Record r = union.get(key);
                assertThat(r).as("%s, acknowledged before the backup", key).isNotNull();
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("v-" + key.substring(3));
            }
            Answer listed = raw(c, "n3", "GET", "/v0/backup", null);
            assertThat(listed.status()).isEqualTo(200);
            assertThat(listed.body()).contains("\"id\":\"" + id + "\"", "\"state\":\"done\"");
            assertThat(raw(c, "n1", "GET", "/v0/backup/20200101-000000-000000", null).status()).isEqualTo(404);

            c.stop("n3");
            Answer refused = raw(c, "n1", "POST", "/v0/backup", null);
            assertThat(refused.status()).as(refused.body()).isEqualTo(503);
            assertThat(refused.body()).contains("n3");
        });
    }

    /**
     * Slow parts (anti-entropy's pace, which backups share, at 50 records a second): a second
     * backup meanwhile is refused, and a member killed mid-way makes the backup failed, also once
     * it is back (it finds its part without a manifest).
     */
    @Test
    void aSecondBackupIsRefusedAndAMemberKilledMidwayFailsTheBackup() throws Exception {
        withCluster(3, Map.of(NodeOption.ANTI_ENTROPY_RATE, "50", NodeOption.ANTI_ENTROPY_INTERVAL, "0"), c -> {
            for (int i = 0; i < 600; i++) {
                assertThat(put(c, "n1", "slow-" + i, "v", q(3, 3)).status()).isEqualTo(Answer.CREATED);
            }
            String id = startBackup(c, "n1");
            Answer second = raw(c, "n2", "POST", "/v0/backup", null);
            assertThat(second.status()).as(second.body()).isEqualTo(409);
            assertThat(second.body()).contains(id);
            assertThat(json(raw(c, "n1", "GET", "/v0/backup/" + id, null)).get("state").getAsString())
                    .isEqualTo("running");

            c.kill("n3");
            JsonObject failed = awaitState(c, "n1", id, "failed");
            assertThat(failed.getAsJsonObject("members").getAsJsonObject("n3").get("state").getAsString())
                    .isEqualTo("failed");

            c.restart("n3");
            JsonObject after = awaitState(c, "n3", id, "failed");
            JsonObject n3 = after.getAsJsonObject("members").getAsJsonObject("n3");
            assertThat(n3.get("state").getAsString()).as("n3's own part, after its restart").isEqualTo("failed");
            assertThat(n3.get("error").getAsString()).isNotEmpty();
        });
    }
}
