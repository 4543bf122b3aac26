package io.kvorum.node.antientropy;

import static io.kvorum.node.antientropy.RepairFixture.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What completed rounds tell of the peers' copies of tombstones, and what survives a restart. */
class RepairLedgerTest {

    private static final Topology THREE = RepairFixture.topology();

    @TempDir
    Path dir;

    /** This node's hybrid clock: each reading a tick later. */
    private final AtomicLong clock = new AtomicLong(1_000_000);

    private RepairLedger open(Topology topology, int rf) {
        return RepairLedger.open(dir, "n1", topology, rf, clock::incrementAndGet);
    }

    /** A round from n1 with {@code peer} that starts now, as the service runs one; returns its start. */
    private long completeRound(RepairLedger ledger, Topology topology, int rf, String peer) {
        long start = clock.incrementAndGet();
        ledger.roundStarting(start);
        ledger.roundCompleted(peer, new RepairScope(new Placement(topology), rf, "n1", peer), start);
        return start;
    }

    /** Rounds from n1 with n2, then n3, as a run does. */
    private void completeRoundsWithEveryPeer(RepairLedger ledger) {
        completeRound(ledger, THREE, 3, "n2");
        completeRound(ledger, THREE, 3, "n3");
    }

    /** A key every replica of which (RF 3 of 3) n1 must know about. */
    private static final byte[] KEY = key("k");

    @Test
    void aTombstoneIsKnownHeldOnlyOnceARoundThatStartedAfterItCompletedWithEveryOtherReplica() {
        RepairLedger ledger = open(THREE, 3);
        long deleted = clock.incrementAndGet();
        ledger.tombstoneStored(KEY, deleted);
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).as("no round yet").isFalse();

        completeRound(ledger, THREE, 3, "n2");
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).as("n3 not yet").isFalse();

        completeRound(ledger, THREE, 3, "n3");
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).isTrue();
        assertThat(ledger.heldByEveryReplica(KEY, clock.incrementAndGet())).as("a delete after both rounds").isFalse();
    }

    @Test
    void aRoundOfASmallerReplicationFactorOrAnotherMembershipDoesNotCount() throws Exception {
        RepairLedger ledger = open(THREE, 3);
        long deleted = clock.incrementAndGet();
        completeRound(ledger, THREE, 2, "n2");
        completeRound(ledger, Topology.parse("n1=127.0.0.1:1001:2001,n3=127.0.0.1:1003:2003"), 3, "n3");

        assertThat(ledger.repairedThrough()).isEmpty();
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).isFalse();
    }

    /** A tombstone stored after a round started, with an older timestamp, was not in that round's trees. */
    @Test
    void aTombstoneThatArrivedLateWaitsForARoundThatStartedAfterIt() {
        RepairLedger ledger = open(THREE, 3);
        long deleted = clock.incrementAndGet();
        long first = clock.incrementAndGet();
        ledger.roundStarting(first);
        ledger.tombstoneStored(KEY, deleted); // a hint, say, while the round runs
        ledger.roundCompleted("n2", new RepairScope(new Placement(THREE), 3, "n1", "n2"), first);
        completeRound(ledger, THREE, 3, "n3");
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).isFalse();

        completeRound(ledger, THREE, 3, "n2");
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).isTrue();
    }

    @Test
    void aGracefulStopKeepsWhatRoundsTaught() {
        RepairLedger ledger = open(THREE, 3);
        long deleted = clock.incrementAndGet();
        completeRoundsWithEveryPeer(ledger);
        ledger.close();

        RepairLedger reopened = open(THREE, 3);

        assertThat(reopened.heldByEveryReplica(KEY, deleted)).isTrue();
        assertThat(reopened.repairedThrough()).containsOnlyKeys("n2", "n3");
    }

    /** After a crash, late tombstones may be unknown: only rounds started after the restart count. */
    @Test
    void afterACrashOnlyRoundsStartedSinceCount() {
        RepairLedger ledger = open(THREE, 3);
        long deleted = clock.incrementAndGet();
        completeRoundsWithEveryPeer(ledger);
        // no close: killed

        RepairLedger reopened = open(THREE, 3);

        assertThat(reopened.heldByEveryReplica(KEY, deleted)).isFalse();
        completeRoundsWithEveryPeer(reopened);
        assertThat(reopened.heldByEveryReplica(KEY, deleted)).isTrue();
    }

    @Test
    void anUnreadableFileOnlyDelaysPurging() throws Exception {
        RepairLedger ledger = open(THREE, 3);
        long deleted = clock.incrementAndGet();
        completeRoundsWithEveryPeer(ledger);
        ledger.close();
        Files.writeString(dir.resolve(RepairLedger.FILE), "kvorum-repaired-through 1\nmembers n1,n2,n3\nclean true\npeer n2\n");

        assertThat(open(THREE, 3).heldByEveryReplica(KEY, deleted)).isFalse();
    }

    @Test
    void aRemovedMemberNoLongerCountsAndAChangeInProgressHoldsEverythingBack() throws Exception {
        RepairLedger ledger = open(THREE, 3);
        Topology two = Topology.parse("n1=127.0.0.1:1001:2001,n2=127.0.0.1:1002:2002");
        long deleted = clock.incrementAndGet();
        completeRound(ledger, THREE, 3, "n2");

        ledger.useMembership(two, false); // n3 removed
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).as("what was learnt under n1-n3 is forgotten").isFalse();
        completeRound(ledger, two, 3, "n2");
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).isTrue();

        ledger.useMembership(two, true);
        assertThat(ledger.heldByEveryReplica(KEY, deleted)).as("a member joins or leaves").isFalse();
    }

    @Test
    void withoutOtherReplicasGraceAloneDecides() throws Exception {
        RepairLedger alone = open(Topology.parse("n1=127.0.0.1:1001:2001"), 1);
        assertThat(alone.heldByEveryReplica(KEY, clock.get())).isTrue();

        RepairLedger rf1 = RepairLedger.open(Files.createDirectories(dir.resolve("rf1")), "n1", THREE, 1,
                clock::incrementAndGet);
        Placement placement = new Placement(THREE);
        String ownKey = null;
        for (int i = 0; ownKey == null; i++) {
            List<ClusterMember> first = placement.replicasFor(key("own" + i), 1);
            ownKey = first.get(0).id().equals("n1") ? "own" + i : null;
        }
        assertThat(rf1.heldByEveryReplica(key(ownKey), clock.get())).isTrue();
    }
}
