package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvorum.node.cluster.MembershipChangeException.Reason;
import io.kvorum.node.util.Failures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The change coordinator's rules (docs/operations.md#growing-and-shrinking-a-cluster) and epoch gossip, with peers faked in memory. */
class ClusterMembershipTest {

    private static final ClusterMember N4 = new ClusterMember("n4", "127.0.0.1", 8084, 9084);

    @TempDir
    Path dir;
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final Map<String, FakePeer> peers = new HashMap<>();
    private Membership first;
    private ClusterMembership n1;
    private final List<Long> adopted = new ArrayList<>();

    /** A peer that answers from its own membership, or not at all while down. */
    static class FakePeer implements MembershipPeer {
        Membership membership;
        boolean down;
        final List<Long> proposed = new ArrayList<>();

        FakePeer(Membership membership) {
            this.membership = membership;
        }

        /** One entry per fetch answered. */
        final List<Long> fetchedBy = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<Membership> fetch() {
            if (down) {
                return unreachable();
            }
            fetchedBy.add(membership.epoch());
            return CompletableFuture.completedFuture(membership);
        }

        @Override
        public CompletableFuture<Void> propose(Membership next) {
            if (down) {
                return unreachable();
            }
            proposed.add(next.epoch());
            if (next.epoch() > membership.epoch()) {
                membership = next;
            }
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Membership> change(MembershipChange change) {
            return CompletableFuture.failedFuture(new IllegalStateException("not the coordinator"));
        }

        private static <T> CompletableFuture<T> unreachable() {
            return CompletableFuture.failedFuture(new MembershipChangeException(Reason.UNAVAILABLE, "down"));
        }
    }

    @BeforeEach
    void cluster() throws Exception {
        first = Membership.first("kvorum", Topology.parse(
                "n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083"), 3);
        n1 = new ClusterMembership("n1", first, new MembershipStore(dir), executor);
        n1.addListener(m -> adopted.add(m.epoch()));
        peers.put("n2", new FakePeer(first));
        peers.put("n3", new FakePeer(first));
        n1.usePeers(peers::get);
    }

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    private static Throwable failureOf(CompletableFuture<?> f) {
        try {
            f.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return Failures.unwrap(e.getCause());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("expected a failure, got " + f.join());
    }

    @Test
    void aJoinIsAdoptedHereAndProposedToEveryOtherMember() throws Exception {
        Membership m = n1.change(new MembershipChange(MembershipChange.Kind.JOIN, N4)).get(5, TimeUnit.SECONDS);

        assertThat(m.state("n4")).isEqualTo(MemberState.JOINING);
        assertThat(n1.membership()).isEqualTo(m);
        assertThat(adopted).containsExactly(2L);
        assertThat(peers.get("n2").membership).isEqualTo(m);
        assertThat(peers.get("n3").membership).isEqualTo(m);
        assertThat(new MembershipStore(dir).load()).as("stored before it was acknowledged").isEqualTo(m);
    }

    @Test
    void theNewNodeAdoptsItsJoinBeforeAnyMemberDoes() throws Exception {
        List<String> seenByNewcomer = new ArrayList<>();
        n1.useNewcomerProposals((newcomer, next) -> {
            seenByNewcomer.add(newcomer.id() + " epoch " + next.epoch() + " while n1 " + n1.membership().epoch()
                    + ", n2 " + peers.get("n2").membership.epoch() + ", n3 " + peers.get("n3").membership.epoch());
            return CompletableFuture.completedFuture(null);
        });

        Membership m = n1.change(new MembershipChange(MembershipChange.Kind.JOIN, N4)).get(5, TimeUnit.SECONDS);

        assertThat(seenByNewcomer).containsExactly("n4 epoch 2 while n1 1, n2 1, n3 1");
        assertThat(n1.membership()).isEqualTo(m);
        assertThat(peers.get("n2").membership).isEqualTo(m);
    }

    @Test
    void aJoinTheNewNodeDoesNotAdoptIs503AndNoMemberAdoptsIt() {
        n1.useNewcomerProposals((newcomer, next) -> CompletableFuture.failedFuture(
                new MembershipChangeException(Reason.UNAVAILABLE, "n4 is unreachable")));

        Throwable refused = failureOf(n1.change(new MembershipChange(MembershipChange.Kind.JOIN, N4)));

        assertThat(refused).isInstanceOf(MembershipChangeException.class).hasMessageContaining("the new node n4");
        assertThat(((MembershipChangeException) refused).reason()).isEqualTo(Reason.UNAVAILABLE);
        assertThat(n1.membership()).isEqualTo(first);
        assertThat(peers.get("n2").membership).isEqualTo(first);
        assertThat(adopted).isEmpty();
    }

    @Test
    void aNewNodeAdoptsOnlyItsOwnJoinAndOnlyFromTheChangeCoordinator() throws Exception {
        Membership seeded = Membership.first("kvorum", Topology.parse("n4=127.0.0.1:8084:9084,n2=127.0.0.1:8082:9082"), 2);
        ClusterMembership n4 = new ClusterMembership("n4", seeded,
                new MembershipStore(Files.createDirectories(dir.resolve("n4"))), executor, false);
        List<Long> installed = new ArrayList<>();
        n4.addListener(m -> installed.add(m.epoch()));
        Membership join = first.withJoining(N4);

        assertThat(failureOf(n4.adoptProposal("n2", join))).as("not the change coordinator")
                .hasMessageContaining("not a member yet");
        assertThat(failureOf(n4.adoptProposal("n1", first.withJoining(new ClusterMember("n4", "127.0.0.1", 8085, 9085)))))
                .as("another address than its own").hasMessageContaining("not a member yet");
        assertThat(failureOf(n4.adoptProposal("n1", first.withJoining(N4).withReadsFromComing()
                .completed()))).as("not joining").hasMessageContaining("not a member yet");
        assertThat(n4.isMember()).isFalse();
        assertThat(n4.membership()).isEqualTo(seeded);

        n4.adoptProposal("n1", join).get(5, TimeUnit.SECONDS);
        assertThat(n4.isMember()).isTrue();
        assertThat(n4.membership()).isEqualTo(join);
        n4.adoptJoined(join).get(5, TimeUnit.SECONDS);
        assertThat(installed).as("the answer to its request adopts nothing more").containsExactly(2L);
        assertThat(new MembershipStore(dir.resolve("n4")).load()).isEqualTo(join);
    }

    @Test
    void aChangeWithAMemberDownIs503NamingItAndChangesNothing() {
        peers.get("n3").down = true;

        Throwable refused = failureOf(n1.change(new MembershipChange(MembershipChange.Kind.JOIN, N4)));

        assertThat(refused).isInstanceOf(MembershipChangeException.class).hasMessageContaining("n3");
        assertThat(((MembershipChangeException) refused).reason()).isEqualTo(Reason.UNAVAILABLE);
        assertThat(n1.membership()).isEqualTo(first);
        assertThat(peers.get("n2").proposed).isEmpty();
    }

    @Test
    void removingAMemberThatAnswersIsRefusedPointingToLeave() {
        Throwable refused = failureOf(n1.change(new MembershipChange(MembershipChange.Kind.REMOVE, first.topology().member("n3"))));

        assertThat(refused).isInstanceOf(MembershipChangeException.class).hasMessageContaining("n3 is up")
                .hasMessageContaining("/v0/cluster/leave?id=n3");
        assertThat(((MembershipChangeException) refused).reason()).isEqualTo(Reason.INVALID);
        assertThat(n1.membership()).as("nothing changed").isEqualTo(first);
        assertThat(peers.get("n2").proposed).isEmpty();
    }

    /**
     * A member that leaves and still answers: its removal is refused for the change in progress
     * (409), which is checked first, rather than for being up (400); once it is down, its removal
     * is accepted and ends the leave.
     */
    @Test
    void removingALeavingMemberThatAnswersIs409ForTheChangeInProgress() throws Exception {
        ClusterMember n3 = first.topology().member("n3");
        n1.change(new MembershipChange(MembershipChange.Kind.LEAVE, n3)).get(5, TimeUnit.SECONDS);

        Throwable refused = failureOf(n1.change(new MembershipChange(MembershipChange.Kind.REMOVE, n3)));

        assertThat(refused).isInstanceOf(MembershipChangeException.class).hasMessageContaining("n3 is leaving");
        assertThat(((MembershipChangeException) refused).reason()).isEqualTo(Reason.IN_PROGRESS);
        assertThat(n1.membership().state("n3")).as("still leaving").isEqualTo(MemberState.LEAVING);

        peers.get("n3").down = true;
        Membership removed = n1.change(new MembershipChange(MembershipChange.Kind.REMOVE, n3)).get(5, TimeUnit.SECONDS);
        assertThat(removed.topology().member("n3")).isNull();
        assertThat(removed.inChange()).isFalse();
    }

    @Test
    void removingTheMemberThatIsDownIsAccepted() throws Exception {
        peers.get("n3").down = true;

        Membership m = n1.change(new MembershipChange(MembershipChange.Kind.REMOVE, first.topology().member("n3")))
                .get(5, TimeUnit.SECONDS);

        assertThat(m.topology().member("n3")).isNull();
        assertThat(peers.get("n2").membership).isEqualTo(m);
    }

    @Test
    void aChangeInProgressIs409AndIsCheckedBeforeAMemberDown() throws Exception {
        n1.change(new MembershipChange(MembershipChange.Kind.JOIN, N4)).get(5, TimeUnit.SECONDS);
        peers.get("n3").down = true;

        Throwable refused = failureOf(n1.change(new MembershipChange(MembershipChange.Kind.LEAVE,
                first.topology().member("n2"))));

        assertThat(((MembershipChangeException) refused).reason()).isEqualTo(Reason.IN_PROGRESS);
        assertThat(refused).hasMessageContaining("n4 is joining");
    }

    @Test
    void movedSwitchesTheReadsEverywhereBeforeItCompletes() throws Exception {
        n1.change(new MembershipChange(MembershipChange.Kind.JOIN, N4)).get(5, TimeUnit.SECONDS);
        FakePeer joiner = new FakePeer(n1.membership());
        peers.put("n4", joiner);

        Membership done = n1.change(new MembershipChange(MembershipChange.Kind.MOVED, N4)).get(5, TimeUnit.SECONDS);

        assertThat(done.inChange()).isFalse();
        assertThat(adopted).containsExactly(2L, 3L, 4L);
        for (String peer : List.of("n2", "n3", "n4")) {
            assertThat(peers.get(peer).proposed).as(peer + " got the switch, then the completion").containsSubsequence(3L, 4L);
        }
    }

    @Test
    void aLeaverThatLostTheAnswerAsksAgainAndIsToldItLeft() throws Exception {
        ClusterMember n3 = first.topology().member("n3");
        n1.change(new MembershipChange(MembershipChange.Kind.LEAVE, n3)).get(5, TimeUnit.SECONDS);
        Membership done = n1.change(new MembershipChange(MembershipChange.Kind.MOVED, n3)).get(5, TimeUnit.SECONDS);
        assertThat(done.state("n3")).isNull();
        List<Long> epochsBefore = List.copyOf(adopted);

        Membership again = n1.change(new MembershipChange(MembershipChange.Kind.MOVED, n3)).get(5, TimeUnit.SECONDS);

        assertThat(again).isEqualTo(done);
        assertThat(adopted).as("asking again changes nothing").isEqualTo(epochsBefore);
    }

    @Test
    void theCoordinatorThatLeavesTellsTheMembersBeforeItDropsThem() throws Exception {
        // As the node does: once it adopts an epoch without itself, it closes its connections to peers.
        n1.addListener(m -> {
            if (m.state("n1") == null) {
                peers.clear();
            }
        });
        ClusterMember self = first.topology().member("n1");
        n1.change(new MembershipChange(MembershipChange.Kind.LEAVE, self)).get(5, TimeUnit.SECONDS);
        FakePeer n2 = peers.get("n2");
        FakePeer n3 = peers.get("n3");

        Membership done = n1.change(new MembershipChange(MembershipChange.Kind.MOVED, self)).get(5, TimeUnit.SECONDS);

        assertThat(done.state("n1")).isNull();
        assertThat(n1.membership()).isEqualTo(done);
        assertThat(n2.membership).as("n2 has the epoch without n1").isEqualTo(done);
        assertThat(n3.membership).isEqualTo(done);
    }

    @Test
    void aChangeInProgressIs409EvenWhenTheCoordinatorIsDown() {
        Membership joining = first.withJoining(N4);
        ClusterMembership n2 = new ClusterMembership("n2", joining, new MembershipStore(dir.resolve("n2")), executor);
        FakePeer coordinator = new FakePeer(joining) {
            @Override
            public CompletableFuture<Membership> change(MembershipChange change) {
                return FakePeer.unreachable();
            }
        };
        n2.usePeers(id -> id.equals("n1") ? coordinator : null);
        ClusterMember n3 = first.topology().member("n3");

        Throwable refused = failureOf(n2.change(new MembershipChange(MembershipChange.Kind.LEAVE, n3)));

        assertThat(refused).isInstanceOf(MembershipChangeException.class).hasMessageContaining("n4 is joining");
        assertThat(((MembershipChangeException) refused).reason()).isEqualTo(Reason.IN_PROGRESS);

        ClusterMembership quiet = new ClusterMembership("n2", first, new MembershipStore(dir.resolve("quiet")), executor);
        quiet.usePeers(id -> id.equals("n1") ? coordinator : null);
        Throwable unreachable = failureOf(quiet.change(new MembershipChange(MembershipChange.Kind.LEAVE, n3)));
        assertThat(((MembershipChangeException) unreachable).reason()).as("no change in progress: the coordinator is"
                + " what is missing").isEqualTo(Reason.UNAVAILABLE);
    }

    @Test
    void aNewerEpochSeenOnARequestIsFetchedFromItsSenderAndTakenOnceAnotherMemberServesIt() throws Exception {
        Membership newer = first.withJoining(N4);
        peers.get("n2").membership = newer;
        peers.get("n3").membership = newer;

        n1.sawEpoch("n2", newer.epoch());

        await().atMost(Duration.ofSeconds(5)).until(() -> n1.membership().equals(newer));
        n1.sawEpoch("n3", first.epoch()); // an older epoch changes nothing
        assertThat(n1.membership()).isEqualTo(newer);
    }

    @Test
    void aNewerEpochThatOnlyItsSenderServesIsNotTaken() throws Exception {
        Membership forged = first.withRemoved("n3");
        peers.get("n2").membership = forged;
        ClusterMembership n3 = new ClusterMembership("n3", first, new MembershipStore(Files.createDirectories(dir.resolve("n3"))), executor);
        n3.usePeers(peers::get);
        List<String> fetchedFrom = new ArrayList<>();
        peers.put("n1", new FakePeer(first) {
            @Override
            public CompletableFuture<Membership> fetch() {
                fetchedFrom.add("n1");
                return super.fetch();
            }
        });

        n3.sawEpoch("n2", forged.epoch());

        await().atMost(Duration.ofSeconds(5)).until(() -> fetchedFrom.contains("n1"));
        n3.sawEpoch("n2", forged.epoch()); // a second look, once the first ended, is refused the same way
        assertThat(n3.membership()).as("n2 does not coordinate changes (n1 does), and n1 serves epoch 1")
                .isEqualTo(first);
        assertThat(new MembershipStore(Files.createDirectories(dir.resolve("n3"))).load()).as("nothing stored").isNull();
    }

    @Test
    void thePeerThatServedAMembershipDoesNotVouchForItItself() throws Exception {
        Membership forged = first.withRemoved("n3");
        peers.get("n2").membership = forged; // n1 asks n2, as no peer is connected for the sender

        n1.sawEpoch("n9", forged.epoch());

        await().atMost(Duration.ofSeconds(5)).until(() -> !peers.get("n3").fetchedBy.isEmpty());
        assertThat(n1.membership()).as("n3 serves epoch 1; n2 alone cannot vouch for what it served").isEqualTo(first);
    }

    @Test
    void aNewerEpochServedByTheCoordinatorIsTakenFromItsSenderAlone() throws Exception {
        Membership newer = first.withJoining(N4);
        ClusterMembership n3 = new ClusterMembership("n3", first, new MembershipStore(Files.createDirectories(dir.resolve("n3"))), executor);
        peers.put("n1", new FakePeer(newer));
        n3.usePeers(id -> id.equals("n1") ? peers.get("n1") : null); // n2 is not reachable: n1 is enough

        n3.sawEpoch("n1", newer.epoch());

        await().atMost(Duration.ofSeconds(5)).until(() -> n3.membership().equals(newer));
    }

    @Test
    void aProposalIsAdoptedOnlyFromTheChangeCoordinator() throws Exception {
        ClusterMembership n3 = new ClusterMembership("n3", first, new MembershipStore(Files.createDirectories(dir.resolve("n3"))), executor);
        Membership dropped = first.withRemoved("n1").withRemoved("n2");

        Throwable refused = failureOf(n3.adoptProposal("n2", dropped));

        assertThat(refused).isInstanceOf(MembershipChangeException.class).hasMessageContaining("proposed by n2")
                .hasMessageContaining("only the change coordinator");
        assertThat(((MembershipChangeException) refused).reason()).isEqualTo(Reason.INVALID);
        assertThat(n3.membership()).isEqualTo(first);

        Membership joining = first.withJoining(N4);
        n3.adoptProposal("n1", joining).get(5, TimeUnit.SECONDS);
        assertThat(n3.membership()).as("n1, the lowest id, coordinates").isEqualTo(joining);
        assertThat(failureOf(n3.adoptProposal("n4", joining.withReadsFromComing())))
                .as("the joining node does not coordinate its own join").hasMessageContaining("proposed by n4");
    }

    @Test
    void theRemovalOfTheLowestMemberIsProposedByTheNextOne() throws Exception {
        ClusterMembership n3 = new ClusterMembership("n3", first, new MembershipStore(Files.createDirectories(dir.resolve("n3"))), executor);
        Membership withoutN1 = first.withRemoved("n1");

        n3.adoptProposal("n2", withoutN1).get(5, TimeUnit.SECONDS);

        assertThat(n3.membership()).isEqualTo(withoutN1);
        assertThat(ClusterMembership.proposers(first, first.withRemoved("n3"))).as("removing another than the lowest")
                .containsExactly("n1");
        assertThat(ClusterMembership.proposers(first, first.withRemoved("n1").withRemoved("n3")))
                .as("n2 proposes the removal of n1, nothing else").containsExactly("n1");
        Membership n1Leaving = first.withLeaving("n1").withReadsFromComing();
        assertThat(ClusterMembership.proposers(n1Leaving, n1Leaving.completed()))
                .as("the coordinator completing its own leave, or the next one removing it: the same membership")
                .containsExactly("n1", "n2");
        assertThat(ClusterMembership.proposers(n1Leaving, n1Leaving.withRemoved("n2"))).containsExactly("n1");
    }

    @Test
    void aMovedComesOnlyFromTheMemberThatMovedItsRecords() throws Exception {
        Membership joining = first.withJoining(N4);
        ClusterMembership coordinator = new ClusterMembership("n1", joining, new MembershipStore(Files.createDirectories(dir.resolve("c"))), executor);
        coordinator.usePeers(id -> new FakePeer(joining));

        Throwable refused = failureOf(coordinator.changeFrom("n2", new MembershipChange(MembershipChange.Kind.MOVED, N4)));

        assertThat(refused).isInstanceOf(MembershipChangeException.class).hasMessageContaining("sent by n2");
        assertThat(coordinator.membership()).isEqualTo(joining);
        Throwable strangersJoin = failureOf(coordinator.changeFrom("n9",
                new MembershipChange(MembershipChange.Kind.JOIN, new ClusterMember("n5", "127.0.0.1", 8085, 9085))));
        assertThat(strangersJoin).as("a JOIN of another node from one that is not a member").hasMessageContaining("sent by n9");

        coordinator.changeFrom("n4", new MembershipChange(MembershipChange.Kind.MOVED, N4)).get(5, TimeUnit.SECONDS);
        assertThat(coordinator.membership().state("n4")).isEqualTo(MemberState.NORMAL);
    }

    @Test
    void aMemberThatIsNotTheCoordinatorForwardsTheChange() throws Exception {
        ClusterMembership n2 = new ClusterMembership("n2", first, new MembershipStore(dir.resolve("n2")), executor);
        List<MembershipChange> forwarded = new ArrayList<>();
        FakePeer coordinator = new FakePeer(first) {
            @Override
            public CompletableFuture<Membership> change(MembershipChange change) {
                forwarded.add(change);
                return CompletableFuture.completedFuture(first.withJoining(change.member()));
            }
        };
        n2.usePeers(id -> id.equals("n1") ? coordinator : null);

        n2.change(new MembershipChange(MembershipChange.Kind.JOIN, N4)).get(5, TimeUnit.SECONDS);

        assertThat(forwarded).extracting(MembershipChange::kind).containsExactly(MembershipChange.Kind.JOIN);
    }
}
