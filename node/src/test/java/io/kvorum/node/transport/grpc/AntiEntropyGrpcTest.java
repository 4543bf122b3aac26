package io.kvorum.node.transport.grpc;

import static io.kvorum.node.antientropy.RepairFixture.key;
import static io.kvorum.node.antientropy.RepairFixture.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.antientropy.MerkleTree;
import io.kvorum.node.antientropy.RepairFixture;
import io.kvorum.node.antientropy.RepairReport;
import io.kvorum.node.antientropy.RepairScope;
import io.kvorum.node.antientropy.RoundStats;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Anti-entropy rounds end to end over in-process gRPC: two nodes with their own LevelDB,
 * the initiator's {@link GrpcAntiEntropyPeer} and the responder's {@link AntiEntropyGrpcService}.
 * Messages are capped at {@value #MAX_MESSAGE_BYTES} bytes on both sides, so a round that sent an
 * unbounded batch would fail.
 */
@Timeout(120)
class AntiEntropyGrpcTest {

    private static final String CLUSTER = "cluster-a";
    private static final int MAX_MESSAGE_BYTES = 512 * 1024;

    @TempDir
    Path dir;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private RepairFixture n1;
    private RepairFixture n2;

    @AfterEach
    void close() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    /** n1 and n2 with replication factor {@code rf}; n2 serves anti-entropy in process. */
    private void twoNodes(int rf) throws Exception {
        n1 = node("n1", rf);
        n2 = node("n2", rf);
    }

    private RepairFixture node(String id, int rf) throws Exception {
        RepairFixture node = new RepairFixture(dir, id, rf, MerkleTree.DEFAULT_FANOUT_BITS, MerkleTree.DEFAULT_DEPTH);
        resources.add(node);
        Server server = InProcessServerBuilder.forName(CLUSTER + "-" + id).directExecutor()
                .maxInboundMessageSize(MAX_MESSAGE_BYTES)
                .addService(new AntiEntropyGrpcService(node.service))
                .intercept(new ClusterCheck(new ForeignClusterLog(CLUSTER))).build().start();
        resources.add(() -> server.shutdownNow().awaitTermination());
        return node;
    }

    /** n1's peer for {@code target}, as if n1 were in {@code cluster}. */
    private AntiEntropyPeer peer(String target, String cluster) {
        ManagedChannel channel = InProcessChannelBuilder.forName(CLUSTER + "-" + target).directExecutor()
                .maxInboundMessageSize(MAX_MESSAGE_BYTES).build();
        resources.add(channel::shutdownNow);
        return new GrpcAntiEntropyPeer(new PeerChannel(target, "n1", cluster, channel), Duration.ofSeconds(60));
    }

    private RepairReport repairFromN1(AntiEntropyPeer... peers) {
        n1.service.start(List.of(peers));
        return n1.service.repair().join();
    }

    @Test
    void replicasThatDifferConvergeBothWays() throws Exception {
        twoNodes(3);
        SortedMap<String, Record> expected = new TreeMap<>();
        for (int i = 0; i < 1000; i++) {
            Record r = value(1000 + i, "n1", "same" + i);
            n1.put("same" + i, r);
            n2.put("same" + i, r);
            expected.put("same" + i, r);
        }
        for (int i = 0; i < 100; i++) {
            n1.put("only1-" + i, value(2000, "n1", "a"));
            n2.put("only2-" + i, value(2000, "n2", "b"));
            expected.put("only1-" + i, value(2000, "n1", "a"));
            expected.put("only2-" + i, value(2000, "n2", "b"));
        }
        for (int i = 0; i < 50; i++) {
            n1.put("newer1-" + i, value(3001, "n1", "new"));
            n2.put("newer1-" + i, value(3000, "n2", "old"));
            n1.put("newer2-" + i, value(3000, "n1", "old"));
            n2.put("newer2-" + i, value(3001, "n2", "new"));
            expected.put("newer1-" + i, value(3001, "n1", "new"));
            expected.put("newer2-" + i, value(3001, "n2", "new"));
        }
        for (int i = 0; i < 30; i++) {
            Record tombstone = Record.tombstone(4001L << 16, "n2");
            n1.put("deleted-" + i, value(4000, "n1", "alive"));
            n2.put("deleted-" + i, tombstone);
            expected.put("deleted-" + i, tombstone);
        }

        RepairReport report = repairFromN1(peer("n2", CLUSTER));

        assertThat(report.isComplete()).as("%s", report).isTrue();
        assertThat(n1.dump()).isEqualTo(expected);
        assertThat(n2.dump()).isEqualTo(expected);
        RoundStats round = report.rounds().get(0);
        assertThat(round.recordsSent()).isGreaterThanOrEqualTo(150); // only1 + newer1, at least
        assertThat(round.recordsReceived()).isGreaterThanOrEqualTo(180); // only2 + newer2 + deleted
        assertThat(round.bucketsDiffering()).isBetween(1L, 330L);

        RepairReport again = n1.service.repair().join();
        assertThat(again.recordsSent() + again.recordsReceived()).as("%s", again).isZero();
    }

    @Test
    void identicalReplicasExchangeOnlyTheRootHash() throws Exception {
        twoNodes(3);
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            entries.add(new Entry(key("k" + i), value(1000 + i, "n1", "v" + i)));
        }
        n1.putAll(entries);
        n2.putAll(entries);

        RepairReport report = repairFromN1(peer("n2", CLUSTER));

        RoundStats round = report.rounds().get(0);
        assertThat(round.recordsSent() + round.recordsReceived()).isZero();
        assertThat(round.bucketsDiffering()).isZero();
        assertThat(round.bucketsCompared()).isEqualTo(1 << 20);
        // Open, one query, one hash, an empty bucket list and two dones: a few dozen bytes.
        assertThat(round.bytesSent() + round.bytesReceived()).as("%s", report).isLessThan(200);
    }

    @Test
    void manyLargeRecordsFlowInBoundedMessages() throws Exception {
        twoNodes(3);
        List<Entry> entries = new ArrayList<>();
        byte[] big = new byte[4096];
        for (int i = 0; i < 2000; i++) {
            entries.add(new Entry(key("big" + i), Record.value(5000L << 16, "n1", big, Record.NEVER_EXPIRES)));
        }
        n1.putAll(entries);

        RepairReport report = repairFromN1(peer("n2", CLUSTER));

        assertThat(report.isComplete()).as("%s", report).isTrue();
        assertThat(n2.dump()).hasSize(2000).isEqualTo(n1.dump());
        RoundStats round = report.rounds().get(0);
        assertThat(round.recordsSent()).isEqualTo(2000);
        assertThat(round.bytesSent()).isGreaterThan(2000L * 4096);
    }

    @Test
    void onlyKeysThatBothNodesReplicateAreExchanged() throws Exception {
        twoNodes(2);
        RepairScope both = new RepairScope(new Placement(RepairFixture.topology()), 2, "n1", "n2");
        List<String> shared = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            n1.put("k" + i, value(1000, "n1", "v"));
            if (both.covers(key("k" + i))) {
                shared.add("k" + i);
            }
        }

        RepairReport report = repairFromN1(peer("n2", CLUSTER));

        assertThat(shared).hasSizeBetween(100, 350);
        assertThat(n2.dump().keySet()).containsExactlyInAnyOrderElementsOf(shared);
        assertThat(report.recordsSent()).isEqualTo(shared.size());
    }

    @Test
    void aNodeOfAnotherClusterIsRefused() throws Exception {
        twoNodes(3);
        n1.put("k", value(1000, "n1", "v"));

        RepairReport report = repairFromN1(peer("n2", "cluster-b"));

        assertThat(report.isComplete()).isFalse();
        assertThat(report.failed()).containsOnlyKeys("n2");
        assertThat(report.failed().get("n2")).contains("refused").contains("not a request of this node's cluster")
                .as("the refusal does not tell a stranger the cluster's identity").doesNotContain("cluster-a");
        assertThat(n2.dump()).isEmpty();
    }

    @Test
    void anUnreachablePeerFailsItsOwnRoundOnly() throws Exception {
        twoNodes(3);
        n1.put("k", value(1000, "n1", "v"));

        RepairReport report = repairFromN1(peer("n2", CLUSTER), peer("n3", CLUSTER)); // nobody serves n3

        assertThat(report.rounds()).extracting(RoundStats::peer).containsExactly("n2");
        assertThat(report.failed()).containsOnlyKeys("n3");
        assertThat(report.failed().get("n3")).contains("unreachable");
        assertThat(n2.dump()).containsKey("k");
    }

    /**
     * A bucket holding a key rewritten during every round (here: a version newer than any round's
     * start, as a write each round finds in flight) still gets its other keys repaired.
     */
    @Test
    void aBucketWithAKeyRewrittenDuringEveryRoundStillRepairsItsOtherKeys() throws Exception {
        twoNodes(3);
        MerkleTree shape = new MerkleTree(MerkleTree.DEFAULT_FANOUT_BITS, MerkleTree.DEFAULT_DEPTH);
        Map<Integer, String> keyOfLeaf = new HashMap<>();
        String hot = null;
        String missing = null;
        for (int i = 0; hot == null; i++) {
            String k = "leaf-mate-" + i;
            hot = keyOfLeaf.putIfAbsent(shape.bucketOf(key(k)), k);
            missing = k;
        }
        Record oldHot = value(1000, "n1", "old");
        n1.put(hot, value(System.currentTimeMillis() + 3_600_000, "n1", "rewritten during every round"));
        n2.put(hot, oldHot);
        Record onlyOnN1 = value(2000, "n1", "missing on n2");
        n1.put(missing, onlyOnN1);

        RepairReport report = repairFromN1(peer("n2", CLUSTER));

        assertThat(report.isComplete()).as("%s", report).isTrue();
        assertThat(n2.dump()).as("the key in flight stays with the write path").containsEntry(hot, oldHot)
                .as("the other key of its bucket is repaired").containsEntry(missing, onlyOnN1);
    }

    /**
     * A completed round tells the ledger that the peer holds this node's tombstones older than the
     * round's start; a round that failed, a peer never repaired with, or a tombstone that came after
     * the round started do not count.
     */
    @Test
    void aCompletedRoundMakesItsPeerKnownToHoldOlderTombstones() throws Exception {
        twoNodes(2);
        Placement placement = new Placement(RepairFixture.topology());
        String withN2 = keyReplicatedOn(placement, "n1", "n2");
        String withN3 = keyReplicatedOn(placement, "n1", "n3");
        long deleted = (System.currentTimeMillis() - 1000) << 16;
        n1.put(withN2, Record.tombstone(deleted, "n1"));
        n1.put(withN3, Record.tombstone(deleted, "n1"));
        assertThat(n1.ledger.heldByEveryReplica(key(withN2), deleted)).as("before any round").isFalse();

        RepairReport report = repairFromN1(peer("n2", CLUSTER), peer("n3", CLUSTER)); // nobody serves n3

        assertThat(report.failed()).containsOnlyKeys("n3");
        assertThat(n2.dump()).containsEntry(withN2, Record.tombstone(deleted, "n1"));
        assertThat(n1.ledger.repairedThrough()).containsOnlyKeys("n2");
        assertThat(n1.ledger.heldByEveryReplica(key(withN2), deleted)).as("n2 completed a round").isTrue();
        assertThat(n1.ledger.heldByEveryReplica(key(withN3), deleted)).as("n3 could not be reached").isFalse();
        long afterTheRound = n1.ledger.repairedThrough().get("n2") + 1;
        assertThat(n1.ledger.heldByEveryReplica(key(withN2), afterTheRound)).as("deleted after the round").isFalse();

        String late = keyReplicatedOn(placement, "n1", "n2", "late-");
        n1.put(late, Record.tombstone(deleted, "n2")); // as a hint or another peer's round brings it
        assertThat(n1.ledger.heldByEveryReplica(key(late), deleted)).as("came after the round started").isFalse();
        n1.service.repair().join();
        assertThat(n1.ledger.heldByEveryReplica(key(late), deleted)).as("after the next round").isTrue();
        assertThat(n2.dump()).containsEntry(late, Record.tombstone(deleted, "n2"));
    }

    private static String keyReplicatedOn(Placement placement, String a, String b) {
        return keyReplicatedOn(placement, a, b, "k-");
    }

    /** A key whose first two replicas are {@code a} and {@code b}. */
    private static String keyReplicatedOn(Placement placement, String a, String b, String prefix) {
        for (int i = 0; ; i++) {
            String k = prefix + i;
            List<String> replicas = placement.replicasFor(key(k), 2).stream().map(m -> m.id()).toList();
            if (replicas.contains(a) && replicas.contains(b)) {
                return k;
            }
        }
    }
}
