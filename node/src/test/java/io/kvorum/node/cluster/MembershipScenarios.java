package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvorum.client.KvorumClient.Options;
import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import ch.qos.logback.classic.Level;
import io.kvorum.node.KvorumNode;
import io.kvorum.node.LogCapture;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.config.Tuning;
import io.kvorum.client.placement.Rendezvous;
import io.kvorum.node.membership.JoinStream;
import io.kvorum.node.membership.MoveProgress;
import io.kvorum.testkit.PrometheusText;
import io.kvorum.testkit.History;
import io.kvorum.testkit.HistoryChecker;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Membership changes on a running cluster (docs/operations.md#growing-and-shrinking-a-cluster): a node joins, one is removed, and requests
 * keep succeeding meanwhile; every write acknowledged before, during and after a change reads back
 * by quorum through every node; a change with another in progress is 409, with a member down 503.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class MembershipScenarios extends ClusterScenarioSupport {

    private static final Duration CHANGE_BOUND = Duration.ofSeconds(60);
    private static final Options QUORUM = q(2, 3);

    MembershipScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /**
     * A fourth node joins a three-node cluster (RF 3) while a writer keeps writing with 2/3: no
     * request fails, the join completes (the new node is normal on every member), and every value
     * acknowledged before, during and after reads back with 2/3 through every node, the new one too.
     */
    @Test
    void aNodeJoinsUnderLoadAndEveryAcknowledgedWriteReadsBack() throws Exception {
        withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            Map<String, String> acknowledged = preload(c, List.of("n1", "n2", "n3"));
            try (Workload load = new Workload(c, List.of("n1", "n2", "n3"), acknowledged)) {
                load.start();
                String joined = c.join(List.of("n2"));
                awaitState(c, c.ids(), joined, "normal");
                load.awaitMoreWrites(20);
                load.stop();
                assertThat(load.failures()).as("requests that failed during the join: " + load.firstFailure()).isZero();
            }
            assertEveryWriteReadsBack(c, c.ids(), acknowledged);
        });
    }

    /**
     * A node joining a quiet three-node cluster (RF 3, every member a replica of every key) takes
     * each record of the keys it gains once, not once from every member: what its join says it
     * took adds up to exactly the keys it gains, and each reads back through it.
     */
    @Test
    void aJoiningNodeTakesEachRecordOnce() throws Exception {
        LogCapture logs = new LogCapture().atInfo(JoinStream.class.getName());
        logs.attach();
        try {
            withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
                Map<String, String> acknowledged = preload(c, List.of("n1", "n2", "n3"), 600);
                String joined = c.join(List.of("n2"));
                awaitState(c, c.ids(), joined, "normal");
                Rendezvous coming = Rendezvous.over(c.ids());
                long gained = acknowledged.keySet().stream()
                        .filter(k -> coming.replicas(k.getBytes(StandardCharsets.UTF_8), 3).contains(joined)).count();
                Pattern took = Pattern.compile(".*joining: .*took (\\d+) records.*");
                long taken = logs.lines(Level.INFO).stream().map(took::matcher).filter(Matcher::matches)
                        .mapToLong(m -> Long.parseLong(m.group(1))).sum();
                assertThat(gained).as("keys the new node gains").isPositive();
                assertThat(taken).as("records the new node took: " + logs.lines(Level.INFO)).isEqualTo(gained);
                assertEveryWriteReadsBack(c, List.of(joined), acknowledged);
            });
        } finally {
            logs.detach();
        }
    }

    /**
     * Under writes, the members route to a joining node only once it knows its join: none of them
     * marks it down (its refusals did, before), none keeps a hint for it, and no write fails.
     */
    @Test
    void aJoiningNodeIsNeitherMarkedDownNorHintedWhileItJoins() throws Exception {
        LogCapture logs = new LogCapture();
        logs.attach();
        try {
            withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
                Map<String, String> acknowledged = preload(c, List.of("n1", "n2", "n3"));
                String joined;
                try (Workload load = new Workload(c, List.of("n1", "n2", "n3"), acknowledged)) {
                    load.start();
                    load.awaitMoreWrites(20);
                    joined = c.join(List.of("n2"));
                    awaitState(c, c.ids(), joined, "normal");
                    load.awaitMoreWrites(20);
                    load.stop();
                    assertThat(load.failures()).as("requests that failed during the join: " + load.firstFailure()).isZero();
                }
                assertThat(logs.problems()).as("what the members said of the new node")
                        .noneMatch(l -> l.contains("peer " + joined + " is down"));
                for (String member : List.of("n1", "n2", "n3")) {
                    PrometheusText metrics = PrometheusText.parse(raw(c, member, "GET", "/metrics", null).body());
                    Map<String, String> toJoined = Map.of("peer", joined);
                    assertThat(metrics.sum("kvorum_hints_delivered_total", toJoined)
                            + metrics.sum("kvorum_hints_pending", toJoined)
                            + metrics.sum("kvorum_hints_dropped_total", toJoined))
                            .as("hints %s kept for %s", member, joined).isZero();
                }
                assertEveryWriteReadsBack(c, c.ids(), acknowledged);
            });
        } finally {
            logs.detach();
        }
    }

    /**
     * 3 -> 4 -> 5 -> 4 -> 3 nodes (RF 3, default quorum 2/3): two joins and a leave under a steady
     * mixed workload of puts, deletes and gets through every member, then a member lost for good is
     * removed and the others repaired. No request failed while every node was up, and the whole
     * history, final reads through every remaining node included, passes the history checker: no
     * read returned a value older than an acknowledged write it followed.
     */
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aClusterGrowsToFiveAndShrinksToThreeUnderAMixedWorkload() throws Exception {
        withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            History history = new History();
            List<String> keys = List.of("a", "b", "c", "d", "e", "f", "g", "h");
            List<String> serving = new CopyOnWriteArrayList<>(List.of("n1", "n2", "n3"));
            AtomicBoolean running = new AtomicBoolean(true);
            List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                int client = i;
                Thread t = new Thread(() -> mixedWorkload(c, history, client, keys, serving, running), "client-" + i);
                t.start();
                clients.add(t);
            }
            try {
                String n4 = c.join(List.of("n1"));
                awaitState(c, c.ids(), n4, "normal");
                serving.add(n4);
                String n5 = c.join(List.of("n3"));
                awaitState(c, c.ids(), n5, "normal");
                serving.add(n5);
                serving.remove(n4);
                acceptedOnceFree(c, "n5", "/v0/cluster/leave?id=" + n4);
                awaitState(c, List.of("n1", "n2", "n3", n5), n4, "absent");
            } finally {
                running.set(false);
                for (Thread t : clients) {
                    t.join(TimeUnit.SECONDS.toMillis(30));
                }
            }
            List<History.Op> failed = history.ops().stream().filter(op -> op.outcome() != History.Outcome.OK).toList();
            assertThat(failed).as("requests that failed while every node was up").isEmpty();

            c.kill("n5"); // lost for good
            onceFree(c, "n2", "/v0/cluster/remove?id=n5", Answer.OK); // the leave may still be finishing
            awaitState(c, List.of("n1", "n2", "n3"), "n5", "absent");
            for (String node : List.of("n1", "n2", "n3")) {
                Answer repaired = raw(c, node, "POST", "/v0/repair", null);
                assertThat(repaired.status()).as("repair on " + node + ": " + repaired).isEqualTo(200);
            }
            for (String node : List.of("n1", "n2", "n3")) {
                for (String key : keys) {
                    history.perform(-1, node, c.client(node), History.Type.GET, key, null);
                }
            }
            assertThat(HistoryChecker.check(history.ops())).as("violations in " + history.summary()).isEmpty();
        });
    }

    /** Sends a change that answers 202 (a join or a leave) until it is accepted: see {@link #onceFree}. */
    private static Answer acceptedOnceFree(MiniCluster c, String via, String pathAndQuery) {
        return onceFree(c, via, pathAndQuery, Answer.ACCEPTED);
    }

    /**
     * Sends a change until it gets {@code expected} (bounded): the previous change is in progress
     * (409) until the coordinator has every member's acknowledgement of its last epoch, a moment
     * after the members show it. Any other answer fails at once.
     */
    private static Answer onceFree(MiniCluster c, String via, String pathAndQuery, int expected) {
        Answer[] last = new Answer[1];
        within(CHANGE_BOUND).untilAsserted(() -> {
            last[0] = raw(c, via, "POST", pathAndQuery, null);
            assertThat(last[0].status()).as(pathAndQuery + ": " + last[0]).isIn(expected, 409);
            assertThat(last[0].status()).isEqualTo(expected);
        });
        return last[0];
    }

    /** One client: sequential operations on the shared keys through the serving nodes in turn. */
    private static void mixedWorkload(MiniCluster c, History history, int client, List<String> keys,
                                      List<String> serving, AtomicBoolean running) {
        Random random = new Random(client);
        int written = 0;
        while (running.get()) {
            List<String> nodes = List.copyOf(serving);
            String via = nodes.get(random.nextInt(nodes.size()));
            String key = keys.get(random.nextInt(keys.size()));
            int dice = random.nextInt(100);
            if (dice < 50) {
                history.perform(client, via, c.client(via), History.Type.PUT, key, key + "=" + client + "-" + (written++));
            } else if (dice < 60) {
                history.perform(client, via, c.client(via), History.Type.DELETE, key, null);
            } else {
                history.perform(client, via, c.client(via), History.Type.GET, key, null);
            }
        }
    }

    /**
     * A member of four (RF 3) leaves while a writer keeps writing: it hands its records over and is
     * dropped from every remaining member's view, no request fails, and every acknowledged write
     * reads back by quorum through the three that remain.
     */
    @Test
    void aMemberLeavesUnderLoadAndEveryAcknowledgedWriteReadsBack() throws Exception {
        withCluster(4, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            List<String> staying = List.of("n1", "n2", "n3");
            Map<String, String> acknowledged = preload(c, staying);
            try (Workload load = new Workload(c, staying, acknowledged)) {
                load.start();
                Answer leave = raw(c, "n2", "POST", "/v0/cluster/leave?id=n4", null);
                assertThat(leave.status()).as("leave: " + leave).isEqualTo(Answer.ACCEPTED);
                assertThat(ClusterView.parse(leave.body()).members()).as("the membership it answers")
                        .anyMatch(m -> m.id().equals("n4") && m.state().equals("leaving"));
                awaitState(c, staying, "n4", "absent");
                load.awaitMoreWrites(20);
                load.stop();
                assertThat(load.failures()).as("requests that failed during the leave: " + load.firstFailure()).isZero();
            }
            within(CHANGE_BOUND).untilAsserted(() -> {
                Answer viaLeft = put(c, "n4", "after-the-leave", "v", QUORUM);
                assertThat(viaLeft.status()).as("a request to the node that left: " + viaLeft).isEqualTo(503);
                assertThat(viaLeft.body()).contains("not a member");
            });
            Answer status = raw(c, "n4", "GET", "/v0/status", null);
            assertThat(status.status()).as("the status of the node that left, which health checks read: " + status)
                    .isEqualTo(503);
            assertEveryWriteReadsBack(c, staying, acknowledged);
        });
    }

    /**
     * A member of four (RF 3) leaves under a writer and a reader that use every ack/from with
     * R + W > from ({@link ContractLoad#R_PLUS_W_ABOVE_FROM}): no read of an acknowledged write or delete
     * answers absent or an older value, during the leave or after it. Anti-entropy is off, so that
     * only the hand-over gives a key's coming first replica what was written with from 1 to the
     * node that leaves.
     */
    @Test
    void aLeaveKeepsEveryWriteReadableWhenRPlusWExceedsFrom() throws Exception {
        withCluster(4, NO_ANTI_ENTROPY, c -> {
            List<String> staying = List.of("n1", "n2", "n3");
            underContractLoad(c, staying, () -> {
                Answer leave = raw(c, "n2", "POST", "/v0/cluster/leave?id=n4", null);
                assertThat(leave.status()).as("leave: " + leave).isEqualTo(Answer.ACCEPTED);
                awaitState(c, staying, "n4", "absent");
                return staying;
            });
        });
    }

    /** As {@link #aLeaveKeepsEveryWriteReadableWhenRPlusWExceedsFrom}, while a fourth node joins three. */
    @Test
    void aJoinKeepsEveryWriteReadableWhenRPlusWExceedsFrom() throws Exception {
        withCluster(3, NO_ANTI_ENTROPY, c -> underContractLoad(c, List.of("n1", "n2", "n3"), () -> {
            String joined = c.join(List.of("n2"));
            awaitState(c, c.ids(), joined, "normal");
            return c.ids();
        }));
    }

    /**
     * Runs {@code change}, which returns once the change is complete with the members to read
     * through after it, under a {@link ContractLoad} through {@code via}; then checks that some
     * reads ran during it, that none was stale, and that every key reads back afterwards.
     */
    private static void underContractLoad(MiniCluster c, List<String> via, Callable<List<String>> change) throws Exception {
        try (ContractLoad load = new ContractLoad(c::client, via)) {
            load.awaitMoreReads(20);
            int before = load.reads();
            List<String> readBackVia = change.call();
            assertThat(load.reads()).as("reads during the change").isGreaterThan(before);
            load.awaitMoreReads(20);
            load.stop();
            load.assertNoStaleRead();
            load.assertEveryKeyReadsBack(readBackVia);
        }
    }

    /**
     * The change coordinator (the member with the lowest id) leaves: it tells the members the epoch
     * without it before it drops its connections to them. It adopted that epoch first, so no member
     * heard of it, and every member waited for the leave to end, refusing changes, for good.
     */
    @Test
    void theChangeCoordinatorLeavesAndEveryMemberSeesItGone() throws Exception {
        withCluster(4, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            List<String> staying = List.of("n2", "n3", "n4");
            Map<String, String> acknowledged = preload(c, staying);
            Answer leave = raw(c, "n3", "POST", "/v0/cluster/leave?id=n1", null);
            assertThat(leave.status()).as("leave: " + leave).isEqualTo(Answer.ACCEPTED);
            awaitState(c, staying, "n1", "absent");
            assertEveryWriteReadsBack(c, staying, acknowledged);
        });
    }

    /**
     * A node that left stops calling the members, which refuse a non-member's calls: it says once
     * that it is no longer a member and disconnects from each, and it does not go on to report
     * them down, which is what their refusals of its heartbeats made it log before.
     */
    @Test
    void aNodeThatLeftDisconnectsFromTheMembersInsteadOfReportingThemDown() throws Exception {
        LogCapture logs = new LogCapture().atInfo(KvorumNode.class.getName(), "io.kvorum.node.PeerWiring");
        logs.attach();
        try {
            withCluster(4, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
                Answer leave = raw(c, "n2", "POST", "/v0/cluster/leave?id=n4", null);
                assertThat(leave.status()).as("leave: " + leave).isEqualTo(Answer.ACCEPTED);
                within(CHANGE_BOUND).untilAsserted(() -> assertThat(logs.lines(Level.INFO))
                        .as("what the node that left says, once").filteredOn(l -> l.contains("no longer a member of cluster"))
                        .hasSize(1));
                within(CHANGE_BOUND).untilAsserted(() -> assertThat(logs.lines(Level.INFO))
                        .filteredOn(l -> l.matches(".*disconnected from n[123]: this node is no longer a member.*")).hasSize(3));
                // Before, refused heartbeats marked the members down within two missed intervals.
                int earlierProblems = logs.problems().size(); // the cluster's start logs peers down too
                Duration missesToDown = Duration.ofSeconds(4 * Tuning.DEFAULTS.liveness().heartbeatInterval().toSeconds());
                await().during(missesToDown).atMost(missesToDown.plusSeconds(5)).pollInSameThread()
                        .until(() -> logs.problems().stream().skip(earlierProblems)
                                .noneMatch(l -> l.matches(".*peer n[123] is down.*")));
            });
        } finally {
            logs.detach();
        }
    }

    /**
     * A join the cluster refuses for good (the new node names an address a member has) fails the
     * new node's start at once with the member's reason, rather than after a minute of retries.
     */
    @Test
    void aJoinTheClusterRefusesFailsTheNewNodesStartAtOnceWithTheReason() throws Exception {
        withCluster(3, Map.of(), c -> {
            ClusterMember n1 = c.member("n1");
            String n1sHttpAddress = "n9=" + n1.host() + ":" + n1.httpPort() + ":" + c.portsNoMemberWasGiven(1)[0];
            assertThatThrownBy(() -> c.startJoiner(n1sHttpAddress, List.of("n2")).close())
                    .isInstanceOf(KvorumNode.StartupException.class)
                    .hasMessageContaining("cannot join through n2").hasMessageContaining("uses an address of member n1");
            assertThat(stateOf(c, "n1", "n9")).as("the refused node in the membership").isEqualTo("absent");
        });
    }

    /**
     * A change needs every member: with one down it is refused with 503 naming it and changes
     * nothing, and it is accepted once that member is back. Removing a member that is down is
     * accepted at once; when the removed node comes back with its old data, the members refuse its
     * requests, so it changes nothing, and it learns from their refusals that it is no longer a member.
     */
    @Test
    void aChangeWithAMemberDownIsRefusedUntilItReturnsButItsRemovalIsNot() throws Exception {
        withCluster(4, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            List<String> staying = List.of("n1", "n2", "n4");
            Map<String, String> acknowledged = preload(c, List.of("n1", "n2", "n3"));
            c.kill("n4");
            Answer refused = raw(c, "n2", "POST", "/v0/cluster/leave?id=n3", null);
            assertThat(refused.status()).as("leave with n4 down: " + refused).isEqualTo(503);
            assertThat(refused.body()).contains("n4");
            assertThat(stateOf(c, "n1", "n3")).as("the refused change had no effect").isEqualTo("normal");
            c.restart("n4");
            acceptedOnceFree(c, "n2", "/v0/cluster/leave?id=n3");
            awaitState(c, staying, "n3", "absent");
            assertEveryWriteReadsBack(c, staying, acknowledged);

            c.kill("n4");
            onceFree(c, "n1", "/v0/cluster/remove?id=n4", Answer.OK); // removed while down; the leave may still be finishing
            awaitState(c, List.of("n1", "n2"), "n4", "absent");
            for (String node : List.of("n1", "n2")) {
                // Gone rather than 0 for ever, which would keep a "peer down" alert firing.
                within(CHANGE_BOUND).untilAsserted(() -> assertThat(PrometheusText.parse(raw(c, node, "GET", "/metrics", null).body())
                        .series("kvorum_peer_up", Map.of("peer", "n4"))).as("kvorum_peer_up of the removed n4 on %s", node)
                        .isEmpty());
            }
            Answer unknown = raw(c, "n1", "POST", "/v0/cluster/remove?id=n9", null);
            assertThat(unknown.status()).as("remove of a node that is not a member: " + unknown).isEqualTo(400);

            // The removed node comes back with its old data and membership: the members refuse its
            // requests, so what it coordinates cannot reach a quorum (504), and their refusals tell it
            // the epoch that no longer has it: within docs/operations.md#growing-and-shrinking-a-cluster's 30 s it learns it and sends its clients
            // to the members (503), its status included. It may learn that before it ever answers
            // a status of 200, so the test does not wait for one.
            c.restartUnready("n4");
            String key = acknowledged.keySet().iterator().next();
            List<Integer> statuses = new CopyOnWriteArrayList<>();
            within(Duration.ofSeconds(30)).untilAsserted(() -> {
                Answer stale = put(c, "n4", key, "from-a-removed-node", q(2, 2));
                statuses.add(stale.status());
                assertThat(stale.status()).as("a write coordinated by a removed node: " + stale).isEqualTo(503);
                assertThat(stale.body()).contains("not a member");
            });
            assertThat(statuses).as("what the removed node answered until it knew").allMatch(s -> s == 504 || s == 503);
            assertThat(stateOf(c, "n4", "n4")).as("the removed node's own view of itself").isEqualTo("absent");
            assertThat(raw(c, "n4", "GET", "/v0/status", null).status()).as("the removed node's status").isEqualTo(503);
            assertEveryWriteReadsBack(c, List.of("n1", "n2"), acknowledged, q(2, 2));
        });
    }

    /**
     * Two changes at once: exactly one is accepted (202) and the other refused with 409, which
     * names the change in progress.
     */
    @Test
    void concurrentChangesGiveOneAcceptanceAndOneConflict() throws Exception {
        withCluster(4, Map.of(NodeOption.REPLICATION_FACTOR, "2"), c -> {
            CompletableFuture<Answer> first = CompletableFuture.supplyAsync(
                    () -> rawUnchecked(c, "n1", "/v0/cluster/leave?id=n3"));
            CompletableFuture<Answer> second = CompletableFuture.supplyAsync(
                    () -> rawUnchecked(c, "n2", "/v0/cluster/leave?id=n4"));
            List<Integer> statuses = new ArrayList<>(List.of(first.get().status(), second.get().status()));
            statuses.sort(Integer::compare);
            assertThat(statuses).as("answers: " + first.get() + " / " + second.get()).containsExactly(202, 409);
            Answer conflict = first.get().status() == 409 ? first.get() : second.get();
            assertThat(conflict.body()).contains("one change at a time");
        });
    }

    /**
     * A member that was down while a node joined learns the new membership from its peers when it
     * returns, and the join, which needs every member's acknowledgement to complete, completes then.
     */
    @Test
    void aMemberDownDuringAJoinLearnsTheMembershipOnItsReturn() throws Exception {
        withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            Map<String, String> acknowledged = preload(c, List.of("n1", "n2", "n3"));
            String joined = c.join(List.of("n1"));
            c.kill("n3");
            assertThat(stateOf(c, "n1", joined)).as("the join waits for n3").isEqualTo("joining");
            c.restart("n3");
            awaitState(c, c.ids(), joined, "normal");
            assertEveryWriteReadsBack(c, c.ids(), acknowledged);
        });
    }

    /**
     * A joining node killed while it takes records in resumes after a restart, and finishes.
     */
    @Test
    void aJoiningNodeKilledMidStreamFinishesItsJoinAfterARestart() throws Exception {
        withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "3"), c -> {
            Map<String, String> acknowledged = preload(c, List.of("n1", "n2", "n3"), 1500);
            String joined = c.join(List.of("n2"), config -> config.withTuning(slowIntake(config)));
            Path progress = c.config(joined).dataDir().resolve(MoveProgress.JOIN_FILE);
            within(CHANGE_BOUND).until(() -> Files.exists(progress));
            c.kill(joined);
            assertThat(stateOf(c, "n1", joined)).isEqualTo("joining");
            c.restart(joined);
            awaitState(c, c.ids(), joined, "normal");
            assertEveryWriteReadsBack(c, c.ids(), acknowledged);
        });
    }

    /**
     * After a node joins a three-node cluster of RF 2, cleanup on each old member drops exactly the
     * records of the keys it no longer replicates, and every key still reads back by quorum.
     */
    @Test
    void cleanupDropsWhatANodeNoLongerReplicatesAndNothingElse() throws Exception {
        withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "2"), c -> {
            Options both = q(2, 2);
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                String key = "clean-" + i;
                assertThat(put(c, "n1", key, "v" + i, both).status()).isEqualTo(Answer.CREATED);
                keys.add(key);
            }
            Placement before = new Placement(Topology.parse(c.clusterSpec()));
            String joined = c.join(List.of("n1"));
            awaitState(c, c.ids(), joined, "normal");
            Topology grown = Topology.parse(c.clusterSpec() + "," + c.member(joined));
            Placement after = new Placement(grown);
            for (String node : List.of("n1", "n2", "n3")) {
                long expected = keys.stream().filter(k -> holds(before, k, node) && !holds(after, k, node)).count();
                Answer cleaned = raw(c, node, "POST", "/v0/cleanup", null);
                assertThat(cleaned.status()).as("cleanup on " + node + ": " + cleaned).isEqualTo(200);
                assertThat(cleaned.body().trim()).as(node).isEqualTo("{\"dropped\":" + expected + "}");
                assertThat(expected).as("the join moved keys away from " + node).isPositive();
            }
            assertThat(raw(c, "n1", "POST", "/v0/cleanup", null).body().trim()).as("a second cleanup")
                    .isEqualTo("{\"dropped\":0}");
            for (String via : c.ids()) {
                for (int i = 0; i < keys.size(); i++) {
                    assertThat(get(c, via, keys.get(i), both)).as(keys.get(i) + " via " + via)
                            .isEqualTo(new Answer(Answer.OK, "v" + i));
                }
            }
        });
    }

    private static boolean holds(Placement placement, String key, String node) {
        return placement.replicasFor(utf8(key), 2).stream().anyMatch(m -> m.id().equals(node));
    }

    private static Tuning slowIntake(NodeConfig config) {
        Tuning t = config.tuning();
        Tuning.Changes changes = t.changes();
        return new Tuning(t.shutdownGrace(), t.executorStopWait(), t.announceWait(), t.storageCacheBytes(),
                t.rangeBatchEntries(), t.rangeBatchBytes(), t.antiEntropyIdleTimeout(), t.hints(), t.liveness(), t.grpc(),
                new Tuning.Changes(changes.proposalTimeout(), changes.changeDeadline(), 400, changes.retryInterval()));
    }

    private static Map<String, String> preload(MiniCluster c, List<String> via) {
        return preload(c, via, 200);
    }

    private static Map<String, String> preload(MiniCluster c, List<String> via, int count) {
        Map<String, String> acknowledged = new ConcurrentHashMap<>();
        for (int i = 0; i < count; i++) {
            String key = "before-" + i;
            Answer a = put(c, via.get(i % via.size()), key, "v" + i, QUORUM);
            assertThat(a.status()).as("preload " + key + ": " + a).isEqualTo(Answer.CREATED);
            acknowledged.put(key, "v" + i);
        }
        return acknowledged;
    }

    private static void assertEveryWriteReadsBack(MiniCluster c, List<String> via, Map<String, String> acknowledged) {
        assertEveryWriteReadsBack(c, via, acknowledged, QUORUM);
    }

    private static void assertEveryWriteReadsBack(MiniCluster c, List<String> via, Map<String, String> acknowledged,
                                                  Options quorum) {
        for (String node : via) {
            for (Map.Entry<String, String> e : acknowledged.entrySet()) {
                assertThat(get(c, node, e.getKey(), quorum)).as("read of " + e.getKey() + " through " + node)
                        .isEqualTo(new Answer(Answer.OK, e.getValue()));
            }
        }
    }

    private static Answer rawUnchecked(MiniCluster c, String via, String pathAndQuery) {
        try {
            return raw(c, via, "POST", pathAndQuery, null);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Polls (bounded) until every node of {@code via} says {@code member} is in {@code state}. */
    static void awaitState(MiniCluster c, List<String> via, String member, String state) {
        within(CHANGE_BOUND).untilAsserted(() -> {
            for (String node : via) {
                assertThat(stateOf(c, node, member)).as(node + "'s view of " + member).isEqualTo(state);
            }
        });
    }

    /** What {@code via} says of {@code member}'s state, or "absent". */
    static String stateOf(MiniCluster c, String via, String member) throws Exception {
        Answer a = raw(c, via, "GET", "/v0/cluster", null);
        assertThat(a.status()).isEqualTo(200);
        return ClusterView.parse(a.body()).members().stream().filter(m -> m.id().equals(member))
                .map(ClusterView.Member::state).findFirst().orElse("absent");
    }

    private static final Map<NodeOption, String> NO_ANTI_ENTROPY = Map.of(NodeOption.REPLICATION_FACTOR, "3",
            NodeOption.ANTI_ENTROPY_INTERVAL, "0");

    /**
     * Quorum writes on a thread of its own, through the given nodes in turn, each to a new key or
     * an overwrite; remembers every acknowledged value and counts failures.
     */
    static final class Workload implements AutoCloseable {
        private final MiniCluster cluster;
        private final List<String> via;
        private final Map<String, String> acknowledged;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicInteger writes = new AtomicInteger();
        private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
        private final Thread thread;

        Workload(MiniCluster cluster, List<String> via, Map<String, String> acknowledged) {
            this.cluster = cluster;
            this.via = via;
            this.acknowledged = acknowledged;
            this.thread = new Thread(this::run, "workload");
        }

        void start() {
            thread.start();
        }

        private void run() {
            for (int i = 0; running.get() && i < 100_000; i++) {
                String key = i % 3 == 0 ? "before-" + (i % 200) : "during-" + i;
                String value = "w" + i;
                String node = via.get(i % via.size());
                Answer a = put(cluster, node, key, value, QUORUM);
                if (a.status() == Answer.CREATED) {
                    acknowledged.put(key, value);
                    writes.incrementAndGet();
                } else {
                    failures.add("PUT " + key + " via " + node + ": " + a);
                }
            }
        }

        /** Waits (bounded) until {@code n} more writes were acknowledged. */
        void awaitMoreWrites(int n) {
            int target = writes.get() + n;
            within(Duration.ofSeconds(30)).until(() -> writes.get() >= target || !thread.isAlive());
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }

        int failures() {
            return failures.size();
        }

        String firstFailure() {
            return failures.isEmpty() ? "none" : failures.get(0);
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }
}
