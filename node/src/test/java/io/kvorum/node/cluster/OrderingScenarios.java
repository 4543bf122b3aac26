package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which version wins (docs/operations.md#how-replicas-converge): last-write-wins on the coordinators' hybrid-logical-clock
 * timestamps, tombstones included; back-to-back writes through different coordinators with no
 * sleep; and the invariant that a read whose quorum overlaps the last write's (R + W > from) sees
 * it, under concurrent clients.
 *
 * <p>The nodes' wall clocks are skewed by tens of milliseconds ({@link #skewClocks}), as real
 * machines' are: in one JVM they would otherwise share one clock, which orders most writes by
 * itself and would hide a hybrid logical clock that does not move past what it has seen.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
abstract class OrderingScenarios extends ClusterScenarioSupport {

    OrderingScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /** n1 on time, n2 50 ms behind, n3 50 ms ahead: every rotation n1 → n2 → n3 → n1 steps back once. */
    static void skewClocks(MiniCluster cluster) {
        long[] skews = {0, -50, 50};
        for (int i = 0; i < cluster.size(); i++) {
            cluster.clock(cluster.ids().get(i)).setSkew(Duration.ofMillis(skews[i % skews.length]));
        }
    }

    /**
     * A write, a delete, an overwrite and a re-create, each missed by a replica that was stopped
     * (gracefully) at the time: after it restarts, a read of all replicas (ack = from = N) answers
     * the newest version, although the restarted replica answers its older one. The keys are led
     * by that replica and the reads go through every node, the restarted one included, whose own
     * stale answer is then the first it gets.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void aReplicaThatMissedUpdatesLosesToThemAfterRestart(int n) throws Exception {
        // Without hints: hinted handoff would race the reads to update the restarted replica.
        withCluster(n, Map.of(NodeOption.HINT_MAX_AGE, "0"), c -> {
            skewClocks(c);
            String victim = "n1";
            Options all = q(n, n);
            Options withoutVictim = q(n - 1, n);
            String written = c.keyWhosePreferenceStartsWith("missed-write-", List.of(victim));
            String deleted = c.keyWhosePreferenceStartsWith("missed-delete-", List.of(victim));
            String overwritten = c.keyWhosePreferenceStartsWith("missed-overwrite-", List.of(victim));
            String recreated = c.keyWhosePreferenceStartsWith("missed-recreate-", List.of(victim));
            assertThat(put(c, "n2", deleted, "old", all).status()).isEqualTo(Answer.CREATED);
            assertThat(put(c, "n2", overwritten, "old", all).status()).isEqualTo(Answer.CREATED);
            assertThat(put(c, "n2", recreated, "old", all).status()).isEqualTo(Answer.CREATED);
            assertThat(delete(c, "n2", recreated, all).status()).isEqualTo(Answer.ACCEPTED);

            c.stop(victim);
            assertThat(put(c, upNode(c, 0), written, "new", withoutVictim).status()).isEqualTo(Answer.CREATED);
            assertThat(delete(c, upNode(c, 1), deleted, withoutVictim).status()).isEqualTo(Answer.ACCEPTED);
            assertThat(put(c, upNode(c, 2), overwritten, "new", withoutVictim).status()).isEqualTo(Answer.CREATED);
            assertThat(put(c, upNode(c, 3), recreated, "new", withoutVictim).status()).isEqualTo(Answer.CREATED);
            c.restart(victim);

            for (String via : c.ids()) {
                assertThat(get(c, via, written, all)).as("missed write, through " + via)
                        .isEqualTo(new Answer(Answer.OK, "new"));
                assertThat(get(c, via, deleted, all)).as("missed delete, through " + via)
                        .isEqualTo(new Answer(Answer.NOT_FOUND, ""));
                assertThat(get(c, via, overwritten, all)).as("missed overwrite, through " + via)
                        .isEqualTo(new Answer(Answer.OK, "new"));
                assertThat(get(c, via, recreated, all)).as("missed re-create, through " + via)
                        .isEqualTo(new Answer(Answer.OK, "new"));
            }
        });
    }

    /**
     * Every node restarted with its wall clock an hour back (a cluster restored from snapshots, a
     * time source that stepped at boot), one of them after a kill: the clocks agree with each other,
     * so the clock check refuses nothing, and a write through any node must still replace the value
     * written before it, not be acknowledged and lost. The write goes through n2, which holds the
     * old value as a replica only: each node starts its clock past every timestamp it stored,
     * whoever stamped it.
     */
    @Test
    void aWriteAfterEveryClockWentBackAcrossARestartStillReplacesTheOlderValue() throws Exception {
        withCluster(3, Map.of(), c -> {
            String key = "clock-set-back";
            Options all = q(3, 3);
            assertThat(put(c, "n1", key, "before", all).status()).isEqualTo(Answer.CREATED);
            c.stop("n1");
            c.kill("n2");
            c.stop("n3");
            for (String id : c.ids()) {
                c.clock(id).setSkew(Duration.ofHours(-1));
            }
            for (String id : c.ids()) {
                c.restart(id);
            }

            assertThat(put(c, "n2", key, "after", all).status()).isEqualTo(Answer.CREATED);
            for (String via : c.ids()) {
                assertThat(get(c, via, key, all)).as("through " + via).isEqualTo(new Answer(Answer.OK, "after"));
            }
        });
    }

    /**
     * docs/operations.md#how-replicas-converge: no sleep is needed between two writes when the second goes through a node that
     * acknowledged the first, or when the first was written with ack = from. Each key gets a
     * sequence of puts and deletes, each through the next node, back to back; then a read through
     * yet another node answers the last one. With {@code down = 0} every write is ack = from = N;
     * with one node down every write is 2/3, which both nodes that are up must acknowledge.
     */
    @ParameterizedTest(name = "{0} nodes, {1} down")
    @CsvSource({"2, 0", "3, 0", "3, 1"})
    void backToBackWritesThroughDifferentCoordinatorsNeedNoSleep(int n, int down) throws Exception {
        withCluster(n, c -> {
            skewClocks(c);
            for (int i = 0; i < down; i++) {
                c.kill("n" + (n - i));
            }
            List<String> up = c.upNodes();
            Options quorum = q(up.size(), n);
            // PUT, PUT, DELETE, PUT, DELETE, PUT: a key gets the first 2..6 of them, so that the last
            // one is a put after a put, a delete after a put, a put after a delete, ...
            boolean[] isDelete = {false, false, true, false, true, false};
            for (int i = 0; i < 200; i++) {
                String key = "back-to-back-" + i;
                int ops = 2 + i % 5;
                String expected = null;
                for (int j = 0; j < ops; j++) {
                    String via = up.get((i + j) % up.size());
                    String what = key + " op " + j + " through " + via;
                    if (isDelete[j]) {
                        assertThat(delete(c, via, key, quorum).status()).as(what).isEqualTo(Answer.ACCEPTED);
                        expected = null;
                    } else {
                        expected = "v" + j + " through " + via;
                        assertThat(put(c, via, key, expected, quorum).status()).as(what).isEqualTo(Answer.CREATED);
                    }
                }
                String reader = up.get((i + ops) % up.size());
                Answer read = get(c, reader, key, q(n - quorum.ack() + 1, n));
                assertThat(read).as(key + " after " + ops + " operations, read through " + reader)
                        .isEqualTo(expected == null ? new Answer(Answer.NOT_FOUND, "") : new Answer(Answer.OK, expected));
            }
        });
    }

    /** The last write a thread had acknowledged on one of its own keys; value null for a delete. */
    private record Acknowledged(String value, int ack, int from) {
        Answer expectedRead() {
            return value == null ? new Answer(Answer.NOT_FOUND, "") : new Answer(Answer.OK, value);
        }

        /** The smallest read quorum that overlaps this write's: R + W > from. */
        Options overlappingRead() {
            return q(from - ack + 1, from);
        }
    }

    /**
     * Concurrent clients mixing reads, writes and deletes with every quorum, on a few keys:
     * <ul>
     *   <li>shared keys, written and deleted by every thread through any node: a successful read
     *       returns a value some thread wrote to that key (or 404);</li>
     *   <li>own keys, written by one thread only, always through the same node (whose clock then
     *       orders them): right after each acknowledged write, and again for the last one after all
     *       threads finished, a read with R + W > from through any node returns exactly that write
     *       (docs/operations.md#how-replicas-converge invariant); other threads read them meanwhile.</li>
     * </ul>
     * The request timeout is 2 s, so that with every node up a refusal means trouble; a few are
     * tolerated for a loaded machine, and a write whose outcome is unknown is never relied upon.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void concurrentClientsReadOnlyWrittenValuesAndOverlappingQuorumsReadTheLastWrite(int n) throws Exception {
        withCluster(n, Map.of(NodeOption.REQUEST_TIMEOUT, "2000"), c -> {
            skewClocks(c);
            int threads = 4;
            int opsPerThread = 120;
            List<int[]> quorums = allQuorums(n);
            Map<String, Set<String>> attempted = new ConcurrentHashMap<>();
            List<String> violations = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger requests = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            AtomicInteger verifiedReadBacks = new AtomicInteger();

            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<Map<String, Acknowledged>>> results = new ArrayList<>();
            try {
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    results.add(pool.submit(() -> {
                        Random random = new Random(thread * 7919L + n);
                        String home = c.ids().get(thread % n);
                        Map<String, Acknowledged> own = new HashMap<>();
                        for (int i = 0; i < opsPerThread; i++) {
                            int[] quorum = quorums.get(random.nextInt(quorums.size()));
                            Options options = q(quorum[0], quorum[1]);
                            String via = c.ids().get(random.nextInt(n));
                            int kind = random.nextInt(10);
                            if (kind < 4) {
                                String key = "own-" + thread + "-" + random.nextInt(3);
                                String value = random.nextInt(4) == 0 ? null : key + " #" + i;
                                if (value != null) {
                                    attempted.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(value);
                                }
                                Answer written = value == null ? delete(c, home, key, options)
                                        : put(c, home, key, value, options);
                                requests.incrementAndGet();
                                if (!written.succeeded()) {
                                    refused.incrementAndGet();
                                    own.remove(key); // outcome unknown; the next acknowledged write decides
                                    continue;
                                }
                                Acknowledged last = new Acknowledged(value, quorum[0], quorum[1]);
                                own.put(key, last);
                                Answer read = get(c, via, key, last.overlappingRead());
                                requests.incrementAndGet();
                                if (!read.succeeded()) {
                                    refused.incrementAndGet();
                                } else if (!read.equals(last.expectedRead())) {
                                    violations.add(key + ": read " + read + " through " + via + " with "
                                            + last.overlappingRead() + " right after " + last);
                                } else {
                                    verifiedReadBacks.incrementAndGet();
                                }
                            } else {
                                String key = kind < 7 ? "shared-" + random.nextInt(4)
                                        : "own-" + random.nextInt(threads) + "-" + random.nextInt(3);
                                int op = kind < 7 ? random.nextInt(3) : 0;
                                Answer answer;
                                if (op == 1) {
                                    String value = key + " by " + thread + " #" + i;
                                    attempted.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(value);
                                    answer = put(c, via, key, value, options);
                                } else if (op == 2) {
                                    answer = delete(c, via, key, options);
                                } else {
                                    answer = get(c, via, key, options);
                                    if (answer.status() == Answer.OK
                                            && !attempted.getOrDefault(key, Set.of()).contains(answer.body())) {
                                        violations.add(key + ": read " + answer + ", which nobody wrote to it");
                                    }
                                }
                                requests.incrementAndGet();
                                if (!answer.succeeded()) {
                                    refused.incrementAndGet();
                                }
                            }
                        }
                        return own;
                    }));
                }
                Map<String, Acknowledged> lastWrites = new HashMap<>();
                for (Future<Map<String, Acknowledged>> result : results) {
                    lastWrites.putAll(result.get(60, TimeUnit.SECONDS));
                }

                assertThat(violations).isEmpty();
                assertThat(refused.get()).as("requests refused of " + requests.get() + " with every node up")
                        .isLessThanOrEqualTo(requests.get() / 20);
                assertThat(verifiedReadBacks.get()).as("reads checked against the write just acknowledged")
                        .isGreaterThan(threads * opsPerThread / 5);
                for (Map.Entry<String, Acknowledged> e : lastWrites.entrySet()) {
                    for (String via : c.ids()) {
                        assertThat(get(c, via, e.getKey(), e.getValue().overlappingRead()))
                                .as("after all threads finished, " + e.getKey() + " through " + via + ", last " + e.getValue())
                                .isEqualTo(e.getValue().expectedRead());
                    }
                }
            } finally {
                pool.shutdownNow();
            }
        });
    }

    /**
     * A node whose wall clock is off from the others' by more than {@code --max-clock-offset}
     * refuses writes (503, naming each peer's offset) instead of stamping timestamps that would
     * misorder them; it still serves reads, its peers still take writes, and once its clock is back
     * it takes writes again. Its peers see the offset in their status, and it sees why it refuses.
     * A client that routes writes to it retries them on another node at once ({@code Retry-After: 0}),
     * well within a deadline shorter than the one second an overloaded node asks for.
     */
    @Test
    void aNodeWhoseClockIsOffFromItsPeersRefusesWritesUntilItIsBack() throws Exception {
        withCluster(3, Map.of(NodeOption.MAX_CLOCK_OFFSET, "1000"), c -> {
            String key = "clock-off";
            String path = "/v0/entity?id=" + key;
            c.clock("n3").setSkew(Duration.ofSeconds(5));
            within(Duration.ofSeconds(20)).untilAsserted(() -> {
                Answer refused = raw(c, "n3", "PUT", path, "stamped 5 s ahead");
                assertThat(refused.status()).as("a write through n3: " + refused).isEqualTo(503);
                assertThat(refused.body()).contains("clock", "--max-clock-offset 1000 ms", "n1 -", "n2 -");
            });
            assertThat(raw(c, "n3", "DELETE", path, null).status()).as("a delete through n3").isEqualTo(503);
            assertThat(status(c, "n3").get("writesRefused").getAsString()).contains("n1 -", "n2 -");
            long n3SeenByN1 = status(c, "n1").getAsJsonObject("peers").getAsJsonObject("n3")
                    .get("clockOffsetMillis").getAsLong();
            assertThat(n3SeenByN1).as("n3's clock as n1 measures it").isBetween(4_000L, 6_000L);
            assertThat(status(c, "n1").has("writesRefused")).as("n1 agrees with n2").isFalse();

            try (KvorumClient routed = KvorumClient.builder().endpoints(c.ids().stream().map(c::httpUri).toList())
                    .routeToReplicas().requestTimeout(Duration.ofMillis(800)).build()) {
                for (int i = 0; i < 10; i++) {
                    String ledByN3 = c.keyWhosePreferenceStartsWith("clock-routed-" + i + "-", List.of("n3"));
                    assertThat(put(routed, ledByN3, "v", q(2, 3)).status()).as("a write routed to n3 first")
                            .isEqualTo(Answer.CREATED);
                }
            }
            // A fresh key: the first writes through n3, before the check caught its clock, may have left a
            // version stamped 5 s ahead on n3 alone (its peers refuse such timestamps, docs/operations.md#clocks).
            String fresh = "clock-off-read";
            assertThat(put(c, "n1", fresh, "through n1", q(3, 3)).status()).isEqualTo(Answer.CREATED);
            assertThat(get(c, "n3", fresh, q(3, 3))).as("n3 still coordinates reads")
                    .isEqualTo(new Answer(Answer.OK, "through n1"));

            c.clock("n3").setSkew(Duration.ZERO);
            within(Duration.ofSeconds(20)).untilAsserted(() ->
                    assertThat(raw(c, "n3", "PUT", "/v0/entity?id=" + fresh, "through n3").status()).isEqualTo(Answer.CREATED));
            assertThat(get(c, "n1", fresh, q(3, 3))).as("n3's write orders after n1's")
                    .isEqualTo(new Answer(Answer.OK, "through n3"));
            assertThat(status(c, "n3").has("writesRefused")).isFalse();
        });
    }

    /**
     * The harm the check prevents: n4, not a replica of the key, with its clock 5 s behind, would
     * stamp a write made after another 5 s before it, acknowledge it, and have it lose to the
     * older write on every replica. It refuses the write instead.
     */
    @Test
    void aWriteThroughANodeWhoseClockIsBehindIsRefusedInsteadOfLost() throws Exception {
        withCluster(4, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            String key = c.keyWhosePreferenceStartsWith("behind-", List.of("n1", "n2", "n3"));
            c.clock("n4").setSkew(Duration.ofSeconds(-5));
            within(Duration.ofSeconds(20)).untilAsserted(() ->
                    assertThat(status(c, "n4").has("writesRefused")).as("n4 has measured its peers").isTrue());

            assertThat(put(c, "n1", key, "first", q(3, 3)).status()).isEqualTo(Answer.CREATED);
            Answer second = raw(c, "n4", "PUT", "/v0/entity?id=" + key, "second");
            assertThat(second.status()).as("the later write, through n4: " + second).isEqualTo(503);
            assertThat(get(c, "n1", key, q(3, 3))).isEqualTo(new Answer(Answer.OK, "first"));
        });
    }
}
