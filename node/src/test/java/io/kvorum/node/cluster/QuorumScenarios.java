package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient.Options;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What {@code ack}/{@code from} mean on a real cluster (docs/http-api.md parameters and defaults, docs/operations.md#how-replicas-converge
 * placement and quorum): which requests are refused, which succeed with which nodes down, and on
 * which nodes a write lands. Each scenario runs on two and three nodes where docs/operations.md#how-replicas-converge applies to both.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class QuorumScenarios extends ClusterScenarioSupport {

    QuorumScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /** docs/http-api.md: {@code from >} cluster size and {@code ack > from} are 400, checked against the real size. */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void aQuorumBeyondTheClusterOrBeyondFromIsRefused(int n) throws Exception {
        withCluster(n, c -> {
            String key = "refused";
            for (String via : c.ids()) {
                Options tooManyReplicas = q(0, n + 1);
                assertBadRequest(put(c, via, key, "v", tooManyReplicas), "PUT from=" + (n + 1), "from");
                assertBadRequest(get(c, via, key, tooManyReplicas), "GET from=" + (n + 1), "from");
                assertBadRequest(delete(c, via, key, tooManyReplicas), "DELETE from=" + (n + 1), "from");

                // The driver refuses this one itself, so it is sent as it is.
                assertBadRequest(raw(c, via, "PUT", "/v0/entity?id=" + key + "&ack=2&from=1", "v"), "PUT ack=2&from=1", "ack");
                assertBadRequest(raw(c, via, "GET", "/v0/entity?id=" + key + "&ack=2&from=1", null), "GET ack=2&from=1", "ack");

                // The default from is the cluster size, so an ack above it alone is also over from.
                assertBadRequest(put(c, via, key, "v", q(n + 1, 0)), "PUT ack=" + (n + 1), "ack");
            }
            // A refused request had no effect.
            assertThat(get(c, "n1", key, q(n, n)).status()).isEqualTo(Answer.NOT_FOUND);
        });
    }

    /**
     * docs/http-api.md defaults: from = replication factor (here the cluster size), ack = from / 2 + 1. With
     * three nodes a default request survives one node down and not two; with two nodes (2/2) it
     * survives none.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void theDefaultQuorumIsAMajorityOfAllNodes(int n) throws Exception {
        withCluster(n, c -> {
            int majority = n / 2 + 1;
            for (int down = 0; down < n; down++) {
                if (down > 0) {
                    c.kill("n" + (n - down + 1));
                }
                String key = "default-" + down;
                String via = upNode(c, down);
                boolean expectSuccess = n - down >= majority;
                String what = "default quorum with " + down + " of " + n + " nodes down";
                Answer written = put(c, via, key, "value-" + down, Options.DEFAULT);
                Answer read = get(c, via, key, Options.DEFAULT);
                Answer deleted = delete(c, via, key, Options.DEFAULT);
                if (expectSuccess) {
                    assertThat(written.status()).as(what + ": PUT " + written).isEqualTo(Answer.CREATED);
                    assertThat(read).as(what + ": GET").isEqualTo(new Answer(Answer.OK, "value-" + down));
                    assertThat(deleted.status()).as(what + ": DELETE " + deleted).isEqualTo(Answer.ACCEPTED);
                } else {
                    assertNotEnoughReplicas(written, what + ": PUT");
                    assertNotEnoughReplicas(read, what + ": GET");
                    assertNotEnoughReplicas(deleted, what + ": DELETE");
                }
            }
        });
    }

    /**
     * docs/operations.md#starting-nodes and docs/http-api.md: {@code --replication-factor 2} on three nodes makes the default 2/2 over the key's
     * first two replicas. An explicit from may still go up to the cluster size.
     */
    @Test
    void theReplicationFactorIsTheDefaultFrom() throws Exception {
        withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "2"), c -> {
            // With from defaulting to 2, ack=3 alone is over from (with the default of 3 it would not be).
            assertBadRequest(put(c, "n1", "k", "v", q(3, 0)), "PUT ack=3 with RF 2", "ack");

            c.kill("n3");
            String n3Third = c.keyWhosePreferenceStartsWith("rf-third-", List.of("n1", "n2"));
            String n3First = c.keyWhosePreferenceStartsWith("rf-first-", List.of("n3"));

            // The default asks the first two replicas: n3 not among them, so n3 down does not matter ...
            assertThat(put(c, "n1", n3Third, "a", Options.DEFAULT).status()).isEqualTo(Answer.CREATED);
            assertThat(get(c, "n2", n3Third, Options.DEFAULT)).isEqualTo(new Answer(Answer.OK, "a"));
            // ... n3 first among them, so with n3 down only one of the two can answer: 2/2 fails. Had
            // the default been 2/3 (from = cluster size), this PUT would have succeeded on n1 and n2.
            assertNotEnoughReplicas(put(c, "n1", n3First, "b", Options.DEFAULT), "default PUT, RF 2, replica down");
            assertNotEnoughReplicas(get(c, "n2", n3First, Options.DEFAULT), "default GET, RF 2, replica down");
            // An explicit from=3 takes its default ack (2) and reaches the two nodes that are up.
            assertThat(put(c, "n1", n3First, "c", q(0, 3)).status()).isEqualTo(Answer.CREATED);
            assertThat(get(c, "n2", n3First, q(0, 3))).isEqualTo(new Answer(Answer.OK, "c"));
        });
    }

    /**
     * docs/operations.md#how-replicas-converge: a request succeeds exactly when ack of the key's first from replicas are up, and
     * otherwise answers 504 Not Enough Replicas. Every quorum is tried with 0, 1, ... n-1 nodes down,
     * on one key per ordering of the nodes, so the down nodes take every place in some key's
     * preference list: first (asked by every from), last, or outside the first from.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void everyQuorumSucceedsExactlyWhenAckOfItsReplicasAreUp(int n) throws Exception {
        withCluster(n, c -> {
            List<List<String>> orderings = permutations(c.ids());
            for (int down = 0; down < n; down++) {
                if (down > 0) {
                    c.kill("n" + (n - down + 1));
                }
                int request = 0;
                for (int[] quorum : allQuorums(n)) {
                    int ack = quorum[0];
                    int from = quorum[1];
                    for (List<String> ordering : orderings) {
                        String key = c.keyWhosePreferenceStartsWith(
                                "matrix-" + down + "-" + ack + "of" + from + "-", ordering);
                        String via = upNode(c, request++);
                        String what = ack + "/" + from + " on a key with preference " + ordering + ", up "
                                + c.upNodes() + ", through " + via;
                        Answer written = put(c, via, key, "v-" + what, q(ack, from));
                        Answer read = get(c, via, key, q(ack, from));
                        Answer deleted = delete(c, via, key, q(ack, from));
                        if (enoughReplicasUp(c, key, ack, from)) {
                            assertThat(written.status()).as(what + ": PUT " + written).isEqualTo(Answer.CREATED);
                            assertThat(read.succeeded()).as(what + ": GET " + read).isTrue();
                            if (2 * ack > from) { // read and write quorums overlap: the read sees the write
                                assertThat(read).as(what + ": GET").isEqualTo(new Answer(Answer.OK, "v-" + what));
                            }
                            assertThat(deleted.status()).as(what + ": DELETE " + deleted).isEqualTo(Answer.ACCEPTED);
                        } else {
                            assertNotEnoughReplicas(written, what + ": PUT");
                            assertNotEnoughReplicas(read, what + ": GET");
                            assertNotEnoughReplicas(deleted, what + ": DELETE");
                        }
                    }
                }
            }
        });
    }

    /**
     * docs/http-api.md: {@code replicas=A/F} is the older spelling of {@code ack=A&from=F}: sent as a person
     * would with curl, each form answers like the other, with one node down so that some quorums
     * fail, and a value written with one form is read with the other. Mixing them is a 400.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void theReplicasParameterMeansAckAndFrom(int n) throws Exception {
        withCluster(n, c -> {
            c.kill("n" + n);
            for (int[] quorum : allQuorums(n)) {
                int ack = quorum[0];
                int from = quorum[1];
                for (List<String> ordering : permutations(c.ids())) {
                    // Two keys with the same preference list: the same replicas answer for both.
                    String oldKey = c.keyWhosePreferenceStartsWith("replicas-" + ack + "of" + from + "-", ordering);
                    String newKey = c.keyWhosePreferenceStartsWith("ackfrom-" + ack + "of" + from + "-", ordering);
                    String replicas = "&replicas=" + ack + "/" + from;
                    String ackFrom = "&ack=" + ack + "&from=" + from;
                    String what = ack + "/" + from + " on preference " + ordering + " with n" + n + " down";
                    Answer putOld = raw(c, "n1", "PUT", "/v0/entity?id=" + oldKey + replicas, "old");
                    Answer putNew = raw(c, "n1", "PUT", "/v0/entity?id=" + newKey + ackFrom, "new");
                    Answer getNewWithOld = raw(c, "n1", "GET", "/v0/entity?id=" + newKey + replicas, null);
                    Answer getOldWithNew = raw(c, "n1", "GET", "/v0/entity?id=" + oldKey + ackFrom, null);

                    assertThat(putOld.status()).as(what + ": PUT " + putOld + " vs " + putNew).isEqualTo(putNew.status());
                    if (enoughReplicasUp(c, oldKey, ack, from)) {
                        assertThat(putOld.status()).as(what + ": PUT " + putOld).isEqualTo(Answer.CREATED);
                        if (2 * ack > from) {
                            assertThat(getNewWithOld).as(what).isEqualTo(new Answer(Answer.OK, "new"));
                            assertThat(getOldWithNew).as(what).isEqualTo(new Answer(Answer.OK, "old"));
                        } else {
                            // R + W <= from: the fastest replica may not hold the write yet, so
                            // either form may answer 404; never another value, never an error.
                            assertThat(getNewWithOld.status() == Answer.NOT_FOUND || getNewWithOld.equals(new Answer(Answer.OK, "new")))
                                    .as(what + ": GET " + getNewWithOld).isTrue();
                            assertThat(getOldWithNew.status() == Answer.NOT_FOUND || getOldWithNew.equals(new Answer(Answer.OK, "old")))
                                    .as(what + ": GET " + getOldWithNew).isTrue();
                        }
                    } else {
                        assertNotEnoughReplicas(putOld, what + ": PUT with replicas=");
                        assertNotEnoughReplicas(getNewWithOld, what + ": GET with replicas=");
                    }
                }
            }
            assertBadRequest(raw(c, "n1", "PUT", "/v0/entity?id=mixed&replicas=1/1&ack=1", "v"),
                    "replicas with ack", "replicas");
            assertBadRequest(raw(c, "n1", "GET", "/v0/entity?id=mixed&replicas=" + (n + 1) + "/" + (n + 1), null),
                    "replicas over the cluster size", "from");
            assertBadRequest(raw(c, "n1", "GET", "/v0/entity?id=mixed&replicas=2/1", null),
                    "replicas with ack over from", "ack");
        });
    }

    /**
     * docs/operations.md#how-replicas-converge "a PUT writes to exactly from nodes, no more", and they are the key's first from.
     *
     * <p>How to see where a write landed through HTTP alone: a GET with from=F asks exactly the key's
     * first F replicas, wherever it is coordinated; so a read of ack=F of from=F through every node
     * shows those F replicas hold the value (for F=1 it is the first replica alone, whichever node
     * is asked). That says nothing about the other nodes, though. To see that none of them holds it,
     * kill the first F replicas and read with ack=N-F of from=N: every remaining node must answer,
     * and the answer is 404 only if none of them holds any version of the key.
     *
     * <p>The write goes through the key's last replica, a node outside the first F, so a coordinator
     * that also stored the write locally is caught too.
     */
    @ParameterizedTest(name = "{0} nodes, from={1}")
    @CsvSource({"2, 1", "3, 1", "3, 2"})
    void aPutLandsOnExactlyTheFirstFromReplicas(int n, int from) throws Exception {
        withCluster(n, c -> {
            for (List<String> ordering : permutations(c.ids())) {
                String key = c.keyWhosePreferenceStartsWith("placed-" + String.join("", ordering) + "-", ordering);
                String outsider = ordering.get(n - 1);
                assertThat(put(c, outsider, key, "placed", q(from, from)).status()).isEqualTo(Answer.CREATED);
                for (String via : c.ids()) {
                    assertThat(get(c, via, key, q(from, from))).as("read of the first " + from + " through " + via)
                            .isEqualTo(new Answer(Answer.OK, "placed"));
                }
            }
            // Kill n1 (from=1) or n1 and n2 (from=2); the keys whose first replicas are exactly those
            // are then read from every other node.
            List<String> killed = c.ids().subList(0, from);
            killed.forEach(c::kill);
            for (List<String> ordering : permutations(c.ids())) {
                if (!Set.copyOf(ordering.subList(0, from)).equals(Set.copyOf(killed))) {
                    continue;
                }
                String key = c.keyWhosePreferenceStartsWith("placed-" + String.join("", ordering) + "-", ordering);
                for (String via : c.upNodes()) {
                    assertThat(get(c, via, key, q(n - from, n)))
                            .as("the nodes after the first " + from + " of " + ordering + ", read through " + via)
                            .isEqualTo(new Answer(Answer.NOT_FOUND, ""));
                }
            }
        });
    }
}
