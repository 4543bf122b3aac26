package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Nodes that are down, come back, lose their disk, or belong to another cluster: docs/operations.md#cluster-identity (a peer
 * that is down costs a request no more than the deadline; nodes refuse traffic from another
 * cluster), docs/operations.md#starting-nodes (a killed node restarted on the same data serves what it acknowledged) and
 * docs/operations.md#how-replicas-converge (the quorum invariant when a replica lost its data).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
abstract class FailureScenarios extends ClusterScenarioSupport {

    FailureScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /**
     * docs/operations.md#cluster-identity: a peer that is down costs a request no more than the deadline. This is that bound,
     * not a benchmark: with a 2 s request timeout, every request must answer within half of it,
     * whether it can succeed without the dead peer (ack = N-1 of N) or not (ack = from = N, which
     * must fail fast with 504 rather than wait for the deadline).
     *
     * <p>The peer is killed and restarted a few times first, because the requests right after a kill
     * are the ones that meet the peer's stream and channel in transition; then it stays down for 200
     * sequential writes and reads.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void aPeerThatIsDownCostsNoMoreThanTheDeadline(int n) throws Exception {
        withCluster(n, Map.of(NodeOption.REQUEST_TIMEOUT, "2000"), c -> {
            Duration bound = c.requestTimeout().dividedBy(2);
            String victim = "n" + n;
            Options withoutVictim = q(n - 1, n);
            Options withVictim = q(n, n);
            for (int round = 0; round < 4; round++) {
                c.kill(victim);
                for (String via : c.upNodes()) {
                    String key = "fresh-kill-" + round + "-" + via;
                    String what = "right after kill " + (round + 1) + ", through " + via;
                    assertNotEnoughReplicas(within(bound, what, () -> put(c, via, key, "x", withVictim)), what);
                    assertThat(within(bound, what, () -> put(c, via, key, "y", withoutVictim)).status())
                            .as(what).isEqualTo(Answer.CREATED);
                    assertNotEnoughReplicas(within(bound, what, () -> get(c, via, key, withVictim)), what);
                }
                c.restart(victim);
            }
            c.kill(victim);
            for (int i = 0; i < 200; i++) {
                String via = upNode(c, i);
                String key = "steady-" + i;
                String value = "v" + i;
                String what = "request " + i + " through " + via + " with " + victim + " down";
                assertThat(within(bound, what, () -> put(c, via, key, value, withoutVictim)).status())
                        .as(what).isEqualTo(Answer.CREATED);
                assertThat(within(bound, what, () -> get(c, via, key, withoutVictim)))
                        .as(what).isEqualTo(new Answer(Answer.OK, value));
                if (i % 20 == 0) {
                    assertNotEnoughReplicas(within(bound, what, () -> put(c, via, key, "w", withVictim)), what);
                    assertNotEnoughReplicas(within(bound, what, () -> get(c, via, key, withVictim)), what);
                }
            }
        });
    }

    private static Answer within(Duration bound, String what, Supplier<Answer> request) {
        long start = System.nanoTime();
        Answer answer = request.get();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).as(what + ": answered " + answer + " after " + took.toMillis() + " ms").isLessThan(bound);
        return answer;
    }

    /**
     * docs/operations.md#cluster-identity: nodes refuse traffic from a node of another cluster. Two foreign nodes are started
     * with a {@code --cluster} that names nodes of this cluster at their real addresses: an
     * "impostor" whose topology has this cluster's ids but n1 somewhere else, and a "stranger" with
     * ids of its own and n2. A request they coordinate that needs a node of this cluster fails with
     * 504, and nothing they send is stored here, even when their own request succeeds without us.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void aNodeOfAnotherClusterIsRefused(int n) throws Exception {
        withCluster(n, c -> {
            int[] ports = c.portsNoMemberWasGiven(4);
            String impostorSpec = c.clusterSpec().replace(c.member("n1").toString(),
                    "n1=127.0.0.1:" + ports[0] + ":" + ports[1]);
            String strangerSpec = "f1=127.0.0.1:" + ports[2] + ":" + ports[3] + "," + c.member("n2");
            KvorumClient impostor = clientOf(c.startOutsider("n1", impostorSpec));
            KvorumClient stranger = clientOf(c.startOutsider("f1", strangerSpec));

            // The impostor has the same ids, so its placement is this cluster's.
            String impostorFirst = c.keyWhosePreferenceStartsWith("foreign-own-", List.of("n1"));
            String oursFirst = c.keyWhosePreferenceStartsWith("foreign-ours-", List.of("n2"));
            // Control: what the impostor stores alone works, so the 504s below are refusals. Its own
            // reads it refuses: a fresh store none of whose peers answers is still checking whether
            // it lost data (docs/operations.md#replacing-a-disk), and so counts toward no read.
            assertThat(put(impostor, impostorFirst, "impostor", q(1, 1)).status()).isEqualTo(Answer.CREATED);
            assertNotEnoughReplicas(get(impostor, impostorFirst, q(1, 1)), "impostor GET of its own record while it checks");

            assertNotEnoughReplicas(put(impostor, oursFirst, "impostor", q(1, 1)), "impostor PUT needing n2");
            assertNotEnoughReplicas(get(impostor, oursFirst, q(1, 1)), "impostor GET needing n2");
            assertNotEnoughReplicas(put(impostor, impostorFirst, "impostor", q(n, n)), "impostor PUT to all");
            assertNotEnoughReplicas(delete(impostor, oursFirst, q(n, n)), "impostor DELETE to all");

            String strangerKey = "foreign-stranger";
            assertNotEnoughReplicas(put(stranger, strangerKey, "stranger", q(2, 2)), "stranger PUT needing n2");
            // Succeeds on the stranger alone; n2 is asked as well and must refuse to store it.
            assertThat(put(stranger, strangerKey, "stranger", q(1, 2)).status()).isEqualTo(Answer.CREATED);

            for (String key : List.of(impostorFirst, oursFirst, strangerKey)) {
                for (String via : c.ids()) {
                    assertThat(get(c, via, key, q(n, n))).as("every replica of " + key + " in this cluster")
                            .isEqualTo(new Answer(Answer.NOT_FOUND, ""));
                }
            }
        });
    }

    /**
     * docs/operations.md#starting-nodes: a killed node restarted with the same data directory serves everything it
     * acknowledged. Every write is ack = from = N, so the victim acknowledged each one; after the
     * restart, keys whose first replica is the victim are read with ack=1&from=1, which asks the
     * victim alone, through every node.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void aKilledNodeServesWhatItAcknowledgedAfterRestart(int n) throws Exception {
        withCluster(n, c -> {
            String victim = "n1";
            List<String> victimFirst = new ArrayList<>();
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                String key = c.keyWhosePreferenceStartsWith("durable-" + i + "-", List.of(victim));
                victimFirst.add(key);
                keys.add(key);
                keys.add("durable-any-" + i);
            }
            for (int i = 0; i < keys.size(); i++) {
                String key = keys.get(i);
                assertThat(put(c, upNode(c, i), key, "first " + key, q(n, n)).status()).isEqualTo(Answer.CREATED);
                assertThat(put(c, upNode(c, i + 1), key, "last " + key, q(n, n)).status()).isEqualTo(Answer.CREATED);
            }

            c.kill(victim);
            c.restart(victim);

            for (String key : victimFirst) {
                for (String via : c.ids()) {
                    assertThat(get(c, via, key, q(1, 1))).as(victim + " alone, asked through " + via)
                            .isEqualTo(new Answer(Answer.OK, "last " + key));
                }
            }
            for (int i = 0; i < keys.size(); i++) {
                String key = keys.get(i);
                assertThat(get(c, upNode(c, i), key, q(n, n))).as("all replicas of " + key)
                        .isEqualTo(new Answer(Answer.OK, "last " + key));
            }
        });
    }

    /**
     * docs/operations.md#how-replicas-converge invariant with a replica that lost its disk: writes acknowledged by all three replicas
     * still have two intact copies after one node is wiped, so every 2/3 read (2 + 2 > 3) sees them,
     * through every node. Anti-entropy is off; the wiped node, read alone with 1/1 reads, refuses
     * until it has rebuilt its copies (docs/operations.md#replacing-a-disk), and never answers 404.
     */
    @Test
    void aQuorumReadStillSeesEveryWriteAfterOneReplicaLostItsData() throws Exception {
        withCluster(3, Map.of(NodeOption.ANTI_ENTROPY_INTERVAL, "0"), c -> {
            String victim = "n2";
            List<String> victimFirst = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                victimFirst.add(c.keyWhosePreferenceStartsWith("wiped-" + i + "-", List.of(victim)));
            }
            List<String> keys = new ArrayList<>(victimFirst);
            for (int i = 0; i < 20; i++) {
                keys.add("wiped-any-" + i);
            }
            for (int i = 0; i < keys.size(); i++) {
                assertThat(put(c, upNode(c, i), keys.get(i), "kept " + i, q(3, 3)).status()).isEqualTo(Answer.CREATED);
            }

            c.kill(victim);
            c.wipe(victim);
            c.restart(victim);

            for (String key : victimFirst) {
                assertThat(get(c, victim, key, q(1, 1)).status()).as("the wiped " + victim + " alone: refused until "
                        + "rebuilt, then the value, never 404").isIn(504, Answer.OK);
            }
            for (int i = 0; i < keys.size(); i++) {
                for (String via : c.ids()) {
                    assertThat(get(c, via, keys.get(i), q(2, 3))).as(keys.get(i) + " through " + via)
                            .isEqualTo(new Answer(Answer.OK, "kept " + i));
                }
            }
        });
    }
}
