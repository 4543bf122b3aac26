package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import ch.qos.logback.classic.Level;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.kvorum.node.LogCapture;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChange;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.MembershipChangeException.Reason;
import io.kvorum.node.cluster.MembershipResponder;
import io.kvorum.node.cluster.Topology;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How {@link GrpcMembershipPeer} tells a member's own refusal of a change (passed on as it was
 * made, whatever its text) from a failure to reach the member (said in the member's name).
 */
@Timeout(30)
class GrpcMembershipPeerTest {

    private static final MembershipChange JOIN = new MembershipChange(MembershipChange.Kind.JOIN,
            new ClusterMember("n4", "127.0.0.1", 8083, 9083));

    private Server server;
    private ManagedChannel channel;

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
    }

    private GrpcMembershipPeer peerRefusingWith(MembershipChangeException refusal) throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new MembershipGrpcService(new FakeCoordinator(null, refusal))).build().start();
        return peerOn(name, "n2");
    }

    /** {@code selfId}'s peer n1 on the in-process server {@code name}, its calls through {@code interceptors}. */
    private GrpcMembershipPeer peerOn(String name, String selfId, ClientInterceptor... interceptors) {
        channel = InProcessChannelBuilder.forName(name).directExecutor().intercept(interceptors).build();
        return new GrpcMembershipPeer(new PeerChannel("n1", selfId, "cluster", channel), Duration.ofSeconds(5),
                Duration.ofSeconds(5));
    }

    /** Serves, as {@code name}, a coordinator (behind the cluster check) whose membership no longer has n4. */
    private FakeCoordinator coordinatorThatRemovedN4(String name) throws Exception {
        Membership withoutN4 = Membership.first("kvorum", Topology.parse(
                "n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083"), 3);
        FakeCoordinator coordinator = new FakeCoordinator(withoutN4, null);
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new MembershipGrpcService(coordinator))
                .intercept(new ClusterCheck(new ForeignClusterLog("cluster"), coordinator)).build().start();
        return coordinator;
    }

    private static MembershipChangeException failureOf(CompletableFuture<?> call) {
        Throwable t = catchThrowable(call::join);
        assertThat(t).isInstanceOf(CompletionException.class).cause().isInstanceOf(MembershipChangeException.class);
        return (MembershipChangeException) t.getCause();
    }

    @Test
    void aMemberUnreachableFromTheCoordinatorIsNamedAsTheCoordinatorSaidIt() throws Exception {
        GrpcMembershipPeer n1 = peerRefusingWith(new MembershipChangeException(Reason.UNAVAILABLE, "n3 did not answer"));

        MembershipChangeException e = failureOf(n1.change(JOIN));

        assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("n3 did not answer");
    }

    @Test
    void aChangeInProgressStaysAConflict() throws Exception {
        GrpcMembershipPeer n1 = peerRefusingWith(new MembershipChangeException(Reason.IN_PROGRESS, "n4 is joining"));

        MembershipChangeException e = failureOf(n1.change(JOIN));

        assertThat(e.reason()).isEqualTo(Reason.IN_PROGRESS);
        assertThat(e.getMessage()).isEqualTo("n4 is joining");
    }

    @Test
    void aPeerThatCannotBeReachedIsNamed() {
        GrpcMembershipPeer n1 = peerOn(InProcessServerBuilder.generateName(), "n2"); // nothing listens there

        MembershipChangeException e = failureOf(n1.change(JOIN));

        assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE);
        assertThat(e.getMessage()).startsWith("n1 is unreachable (UNAVAILABLE)");
    }

    /**
     * A node that left and lost the answer that completed its leave asks again ({@code MOVED} of
     * itself), and is answered with the membership that no longer has it; anything else it sends is
     * refused, as from any node that is not a member.
     */
    @Test
    void aFormerMemberMayAskOnlyWhetherItsOwnMoveCompleted() throws Exception {
        String name = InProcessServerBuilder.generateName();
        FakeCoordinator coordinator = coordinatorThatRemovedN4(name);
        Membership withoutN4 = coordinator.membership();
        GrpcMembershipPeer fromN4 = peerOn(name, "n4");
        ClusterMember n4 = new ClusterMember("n4", "127.0.0.1", 8084, 9084);

        Membership answer = fromN4.change(new MembershipChange(MembershipChange.Kind.MOVED, n4)).join();

        assertThat(answer.topology().member("n4")).isNull();
        assertThat(answer.epoch()).isEqualTo(withoutN4.epoch());
        MembershipChangeException other = failureOf(fromN4.change(new MembershipChange(MembershipChange.Kind.MOVED,
                withoutN4.topology().member("n2"))));
        assertThat(other.getMessage()).contains("n4 is not a member of this cluster");
        MembershipChangeException leave = failureOf(fromN4.change(new MembershipChange(MembershipChange.Kind.LEAVE, n4)));
        assertThat(leave.getMessage()).contains("n4 is not a member of this cluster");
        assertThat(coordinator.changes).as("only the own MOVED reached the coordinator")
                .containsExactly(new MembershipChange(MembershipChange.Kind.MOVED, n4));
    }

    /**
     * The calls a node had in flight when it left are refused as any former member's, but logged
     * as what they are, at INFO: the advice for a removed node that came back with its old data is
     * for a node this one never saw as a member, at WARN.
     */
    @Test
    void aNodeSeenLeavingIsLoggedAsLeftAndAStrangerIsWarnedAbout() throws Exception {
        Membership withN4 = Membership.first("kvorum", Topology.parse("n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,"
                + "n3=127.0.0.1:8083:9083,n4=127.0.0.1:8084:9084"), 3);
        FakeCoordinator coordinator = new FakeCoordinator(withN4, null);
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new MembershipGrpcService(coordinator))
                .intercept(new ClusterCheck(new ForeignClusterLog("cluster"), coordinator)).build().start();
        coordinator.adopted(withN4.withRemoved("n4"));
        LogCapture logs = new LogCapture().atInfo(ForeignClusterLog.class.getName());
        logs.attach();
        try {
            GrpcMembershipPeer fromN4 = peerOn(name, "n4");
            failureOf(fromN4.change(new MembershipChange(MembershipChange.Kind.LEAVE, withN4.topology().member("n4"))));
            channel.shutdownNow();
            GrpcMembershipPeer fromN9 = peerOn(name, "n9");
            failureOf(fromN9.change(new MembershipChange(MembershipChange.Kind.LEAVE,
                    new ClusterMember("n9", "127.0.0.1", 8089, 9089))));
        } finally {
            logs.detach();
        }
        assertThat(logs.lines(Level.INFO)).as("what was logged of the two refusals").satisfiesExactly(
                left -> assertThat(left).startsWith("INFO").contains("'n4'").contains("left this cluster or was removed"),
                stranger -> assertThat(stranger).startsWith("WARN").contains("'n9'").contains("wipe its data dir"));
    }

    /**
     * A removed node that came back asks for the membership and is answered (that is how it learns
     * it was removed); its other calls are refused with the epoch that no longer has it, which
     * {@link NotAMemberRefusals} reports to its membership as seen from the refusing peer.
     */
    @Test
    void aRemovedNodeIsToldTheEpochThatNoLongerHasItAndMayFetchIt() throws Exception {
        String name = InProcessServerBuilder.generateName();
        FakeCoordinator coordinator = coordinatorThatRemovedN4(name);
        Membership withoutN4 = coordinator.membership();
        FakeCoordinator removedNode = new FakeCoordinator(null, null);
        GrpcMembershipPeer fromN4 = peerOn(name, "n4", new NotAMemberRefusals("n1", removedNode));

        Membership fetched = fromN4.fetch().join();
        assertThat(fetched.topology().member("n4")).isNull();
        assertThat(removedNode.epochsSeen).as("an answered fetch reports nothing").isEmpty();

        MembershipChangeException leave = failureOf(fromN4.change(new MembershipChange(MembershipChange.Kind.LEAVE,
                new ClusterMember("n4", "127.0.0.1", 8084, 9084))));
        assertThat(leave.getMessage()).contains("n4 is not a member of this cluster");
        assertThat(removedNode.epochsSeen).containsExactly("n1@" + withoutN4.epoch());
        assertThat(coordinator.changes).as("the refused change never reached the coordinator").isEmpty();
    }

    /**
     * A coordinator that records every change it is asked and every epoch it saw. It refuses a
     * change with {@code refusal}, or, when that is null, answers it with {@code membership} (its
     * change is complete).
     */
    private static final class FakeCoordinator implements MembershipResponder {
        private volatile Membership membership;
        private final MembershipChangeException refusal;
        final List<MembershipChange> changes = new CopyOnWriteArrayList<>();
        /** Every {@link #sawEpoch} call, as {@code sender@epoch}. */
        final List<String> epochsSeen = new CopyOnWriteArrayList<>();

        FakeCoordinator(Membership membership, MembershipChangeException refusal) {
            this.membership = membership;
            this.refusal = refusal;
        }

        /** The membership it adopts next, as after a change. */
        void adopted(Membership next) {
            membership = next;
        }

        @Override
        public boolean isMember() {
            return true;
        }

        @Override
        public Membership membership() {
            return membership;
        }

        @Override
        public CompletableFuture<Void> adopt(Membership proposed) {
            return CompletableFuture.failedFuture(new UnsupportedOperationException());
        }

        @Override
        public CompletableFuture<Void> adoptProposal(String sender, Membership proposed) {
            return adopt(proposed);
        }

        @Override
        public CompletableFuture<Membership> changeFrom(String sender, MembershipChange change) {
            return change(change);
        }

        @Override
        public CompletableFuture<Membership> change(MembershipChange change) {
            changes.add(change);
            return refusal != null ? CompletableFuture.failedFuture(refusal) : CompletableFuture.completedFuture(membership);
        }

        @Override
        public void sawEpoch(String sender, long epoch) {
            epochsSeen.add(sender + "@" + epoch);
        }
    }
}
