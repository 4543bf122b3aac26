package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.PrometheusText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Anti-entropy (docs/operations.md#how-replicas-converge, {@code POST /v0/repair} in docs/http-api.md): replicas compare Merkle trees and exchange
 * what differs, so each key's first RF replicas converge without reads or hints.
 *
 * <p>A replica is read "alone" by stopping the others and reading through it with ack=1 of
 * from=N: only it can answer. (With from=1, a read asks the key's first replica, which may be
 * another node.) Writes that must miss a replica use {@code from} smaller than RF, on keys whose
 * preference list puts that replica after the first {@code from}, so no hint or read repair can
 * deliver them: only anti-entropy can.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
abstract class AntiEntropyScenarios extends ClusterScenarioSupport {

    private static final Duration CONVERGENCE_BOUND = Duration.ofSeconds(60);
    /** One tree of the default shape has this many leaves; a run compares one tree per peer. */
    private static final long LEAVES = 1 << 20;

    AntiEntropyScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /**
     * docs/operations.md#replacing-a-disk: lose a node's disk, bring it back: it answers no read
     * until it has taken every key back by itself, and a repair afterwards has nothing to bring.
     */
    @Test
    void aNodeThatLostItsDiskGetsEveryKeyBackWithoutRepair() throws Exception {
        withCluster(3, c -> {
            Map<String, String> data = writeAll(c, "ae-wipe-", 300);
            String n3First = c.keyWhosePreferenceStartsWith("ae-wipe-", List.of("n3"));
            c.stop("n3");
            c.wipe("n3");
            c.restart("n3");
            assertThat(get(c, "n1", n3First, q(1, 1)).status()).as("n3 lost its data, but never answers 404 for it")
                    .isNotEqualTo(Answer.NOT_FOUND);
            within(CONVERGENCE_BOUND).untilAsserted(() ->
                    assertThat(status(c, "n3").get("status").getAsString()).isEqualTo("serving"));

            Answer repair = repair(c, "n3");

            assertThat(repair.status()).as(repair.toString()).isEqualTo(Answer.OK);
            JsonObject summary = JsonParser.parseString(repair.body()).getAsJsonObject();
            assertThat(ids(summary, "peers")).containsExactly("n1", "n2");
            assertThat(summary.get("recordsReceived").getAsLong()).as(repair.body()).isZero();
            assertThat(summary.get("bucketsCompared").getAsLong()).isEqualTo(2 * LEAVES);
            c.stop("n1");
            c.stop("n2");
            assertAloneServes(c, "n3", data);
        });
    }

    /** A run between identical replicas exchanges tree hashes only: no records, a few bytes. */
    @Test
    void aRepairBetweenIdenticalReplicasExchangesNoRecords() throws Exception {
        withCluster(3, c -> {
            writeAll(c, "ae-same-", 200);

            Answer repair = repair(c, "n1");

            assertThat(repair.status()).as(repair.toString()).isEqualTo(Answer.OK);
            JsonObject summary = JsonParser.parseString(repair.body()).getAsJsonObject();
            assertThat(ids(summary, "peers")).containsExactly("n2", "n3");
            assertThat(summary.get("recordsSent").getAsLong()).as(repair.body()).isZero();
            assertThat(summary.get("recordsReceived").getAsLong()).as(repair.body()).isZero();
            assertThat(summary.get("bucketsCompared").getAsLong()).isEqualTo(2 * LEAVES);
            assertThat(summary.get("bytesSent").getAsLong() + summary.get("bytesReceived").getAsLong())
                    .as(repair.body()).isLessThan(500);
        });
    }

    /**
     * Deletes are tombstones and propagate like writes: keys are deleted with from=2 on keys whose
     * first two replicas are n1 and n2, so n3, their third, keeps the value until repair.
     */
    @Test
    void deletesPropagateByRepair() throws Exception {
        withCluster(3, c -> {
            Map<String, String> expected = new LinkedHashMap<>();
            for (int i = 0; i < 40; i++) {
                List<String> first = i % 2 == 0 ? List.of("n1", "n2") : List.of("n2", "n1");
                String key = c.keyWhosePreferenceStartsWith("ae-del-" + i + "-", first);
                assertThat(put(c, "n1", key, "v" + i, q(3, 3)).status()).isEqualTo(Answer.CREATED);
                if (i % 4 == 0) {
                    expected.put(key, "v" + i);
                } else {
                    assertThat(delete(c, "n2", key, q(2, 2)).status()).isEqualTo(Answer.ACCEPTED);
                    expected.put(key, null);
                }
            }
            String deleted = expected.keySet().stream().filter(k -> expected.get(k) == null).findFirst().orElseThrow();
            c.stop("n1");
            c.stop("n2");
            assertThat(get(c, "n3", deleted, q(1, 3)).status()).as("n3 missed the delete").isEqualTo(Answer.OK);
            c.restart("n1");
            c.restart("n2");

            Answer repair = repair(c, "n1");

            assertThat(repair.status()).as(repair.toString()).isEqualTo(Answer.OK);
            c.stop("n1");
            c.stop("n2");
            assertAloneServes(c, "n3", expected);
        });
    }

    /**
     * With a short --anti-entropy-interval, a node that missed writes (no hints) converges without
     * anyone calling repair.
     */
    @Test
    void periodicAntiEntropyConvergesWithoutRepair() throws Exception {
        withCluster(3, Map.of(NodeOption.ANTI_ENTROPY_INTERVAL, "300", NodeOption.HINT_MAX_AGE, "0"), c -> {
            Map<String, String> data = writeAll(c, "ae-periodic-", 100);
            List<String> n3First = new ArrayList<>();
            c.stop("n3");
            for (int i = 0; i < 30; i++) {
                String key = c.keyWhosePreferenceStartsWith("ae-periodic-first-" + i + "-", List.of("n3"));
                assertThat(put(c, "n1", key, "f" + i, q(2, 3)).status()).isEqualTo(Answer.CREATED);
                data.put(key, "f" + i);
                n3First.add(key);
            }
            c.restart("n3");

            // from=1 on keys whose first replica is n3 asks n3 alone, with every node up.
            List<String> missing = new ArrayList<>(n3First);
            within(CONVERGENCE_BOUND).untilAsserted(() -> {
                missing.removeIf(key -> get(c, upNode(c, key.hashCode()), key, q(1, 1)).status() == Answer.OK);
                assertThat(missing).as("n3 still lacks %s after %s of periodic anti-entropy", missing, CONVERGENCE_BOUND)
                        .isEmpty();
            });
            c.stop("n1");
            c.stop("n2");
            assertAloneServes(c, "n3", data);
        });
    }

    /**
     * docs/http-api.md: 504 naming the peer that could not be reached, while the round with the other one
     * still runs: a key only n1 holds reaches n3 although n2 is down.
     */
    @Test
    void aRepairWithAPeerDownAnswers504NamingItAndStillRepairsWithTheOthers() throws Exception {
        withCluster(3, c -> {
            String onlyOnN1 = c.keyWhosePreferenceStartsWith("ae-down-", List.of("n1"));
            assertThat(put(c, "n1", onlyOnN1, "lonely", q(1, 1)).status()).isEqualTo(Answer.CREATED);
            c.stop("n2");

            Answer repair = repair(c, "n1");

            assertThat(repair.status()).as(repair.toString()).isEqualTo(504);
            String[] parts = repair.body().split("; completed rounds: ", 2);
            assertThat(parts).as(repair.body()).hasSize(2);
            assertThat(parts[0]).contains("could not reach n2").doesNotContain("could not reach n3");
            JsonObject completed = JsonParser.parseString(parts[1]).getAsJsonObject();
            assertThat(ids(completed, "peers")).containsExactly("n3");
            assertThat(ids(completed, "unreachable")).containsExactly("n2");
            c.stop("n1");
            assertAloneServes(c, "n3", Map.of(onlyOnN1, "lonely"));
        });
    }

    /**
     * Writes in flight during a round (acknowledged by two replicas, still on their way to the
     * third) are not differences: rounds under a steady write load over many keys, in which no
     * replica misses a write, exchange no records. (One key rewritten without pause is in flight
     * at almost any moment; the confirmation can only wait for writes that end.)
     */
    @Test
    void writesInFlightDuringARoundAreNotExchanged() throws Exception {
        withCluster(3, c -> {
            writeAll(c, "ae-busy-", 50);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger written = new AtomicInteger();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int writer = w;
                Thread t = new Thread(() -> {
                    for (int i = 0; i < 100_000 && !stop.get(); i++) {
                        if (put(c, upNode(c, i + writer), "ae-busy-" + writer + "-" + (i % 20_000), "v" + i, q(2, 3))
                                .status() == Answer.CREATED) {
                            written.incrementAndGet();
                        }
                    }
                }, "writer-" + w);
                t.start();
                writers.add(t);
            }
            try {
                for (int round = 0; round < 3; round++) {
                    int before = written.get();
                    Answer repair = repair(c, "n1");

                    assertThat(repair.status()).as(repair.toString()).isEqualTo(Answer.OK);
                    assertThat(written.get()).as("writes during the round").isGreaterThan(before);
                    JsonObject summary = JsonParser.parseString(repair.body()).getAsJsonObject();
                    assertThat(summary.get("recordsSent").getAsLong() + summary.get("recordsReceived").getAsLong())
                            .as("records exchanged by a round under writes: %s", repair.body()).isZero();
                }
            } finally {
                stop.set(true);
                for (Thread t : writers) {
                    t.join();
                }
            }
        });
    }

    /**
     * docs/operations.md#tombstones-and-repair: a replica down for longer than --tombstone-grace
     * does not bring a deleted value back. The delete misses n3 (its hint expires before n3 is
     * back); n1 and n2 keep their tombstones past the grace while n3 is not known to hold them;
     * once n3 is back, repair everywhere leaves the key deleted through every node, and the
     * tombstones are purged everywhere afterwards, the key still deleted.
     */
    @Test
    void aReplicaDownForLongerThanTheGraceDoesNotBringADeletedValueBack() throws Exception {
        Map<NodeOption, String> shortGrace = Map.of(NodeOption.TOMBSTONE_GRACE, "1500", NodeOption.HINT_MAX_AGE, "500",
                NodeOption.PURGE_INTERVAL, "200", NodeOption.ANTI_ENTROPY_INTERVAL, "500");
        withCluster(3, shortGrace, c -> {
            String key = "gc-deleted";
            assertThat(put(c, "n1", key, "deleted while n3 was down", q(3, 3)).status()).isEqualTo(Answer.CREATED);
            c.stop("n3");
            assertThat(delete(c, "n1", key, q(2, 3)).status()).isEqualTo(Answer.ACCEPTED);

            // The grace passes, and the purge runs on n1 and n2, while n3 is down.
            for (String node : List.of("n1", "n2")) {
                within(CONVERGENCE_BOUND).untilAsserted(() -> assertThat(tombstones(c, node, "held_back")
                        + tombstones(c, node, "purged_total")).as("tombstones past the grace on %s", node).isPositive());
            }
            c.restart("n3");
            for (String node : c.ids()) {
                Answer repair = repair(c, node);
                assertThat(repair.status()).as(repair.toString()).isEqualTo(Answer.OK);
            }
            assertDeletedThroughEveryNode(c, key);

            for (String node : c.ids()) {
                within(CONVERGENCE_BOUND).untilAsserted(() -> {
                    assertThat(tombstones(c, node, "purged_total")).as("tombstones purged by %s", node).isPositive();
                    assertThat(tombstones(c, node, "held_back")).as("tombstones held back by %s", node).isZero();
                });
            }
            for (String node : c.ids()) {
                assertThat(repair(c, node).status()).isEqualTo(Answer.OK);
            }
            assertDeletedThroughEveryNode(c, key);
        });
    }

    /** {@code kvorum_tombstones_<name>} on {@code node}. */
    private static double tombstones(MiniCluster c, String node, String name) throws Exception {
        return PrometheusText.parse(raw(c, node, "GET", "/metrics", null).body()).sum("kvorum_tombstones_" + name, Map.of());
    }

    /** A read of every replica's version (ack=3 of 3) through each node answers 404. */
    private static void assertDeletedThroughEveryNode(MiniCluster c, String key) {
        for (String node : c.ids()) {
            assertThat(get(c, node, key, q(3, 3))).as("%s through %s", key, node).isEqualTo(new Answer(Answer.NOT_FOUND, ""));
        }
    }

    /** Writes {@code n} keys to every replica (3/3) through every node in turn. */
    private static Map<String, String> writeAll(MiniCluster c, String prefix, int n) {
        Map<String, String> data = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String key = prefix + i;
            Answer answer = put(c, upNode(c, i), key, "v" + i, q(c.size(), c.size()));
            assertThat(answer.status()).as("write %d to all through %s: %s", i, upNode(c, i), answer)
                    .isEqualTo(Answer.CREATED);
            data.put(key, "v" + i);
        }
        return data;
    }

    private static Answer repair(MiniCluster c, String via) throws Exception {
        return raw(c, via, "POST", "/v0/repair", null);
    }

    /** The node ids listed in {@code field} of a repair summary. */
    private static List<String> ids(JsonObject summary, String field) {
        List<String> ids = new ArrayList<>();
        summary.getAsJsonArray(field).forEach(id -> ids.add(id.getAsString()));
        return ids;
    }

    /**
     * With every other node down, {@code node} alone answers each key (ack=1 of from=N): with the
     * value, or 404 where the expected value is null (deleted).
     */
    private static void assertAloneServes(MiniCluster c, String node, Map<String, String> expected) {
        assertThat(c.upNodes()).containsExactly(node);
        Options alone = q(1, c.size());
        List<String> wrong = new ArrayList<>();
        expected.forEach((key, value) -> {
            Answer want = value == null ? new Answer(Answer.NOT_FOUND, "") : new Answer(Answer.OK, value);
            Answer got = get(c, node, key, alone);
            if (!got.equals(want)) {
                wrong.add(key + ": " + got + " instead of " + want);
            }
        });
        assertThat(wrong).as(node + " alone, of " + expected.size() + " keys").isEmpty();
    }
}
