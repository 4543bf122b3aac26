package io.kvorum.node.membership;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChange;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.http.ClusterAdmin;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The HTTP API's side of the membership (docs/operations.md#growing-and-shrinking-a-cluster): a leave or remove request, on any member, is
 * sent to the change coordinator through {@link ClusterMembership#change}; cleanup runs on
 * {@code maintenance}, the executor of the node's other storage passes.
 */
public final class MembershipAdmin implements ClusterAdmin {

    private final ClusterMembership membership;
    private final Cleanup cleanup;
    private final Executor maintenance;

    public MembershipAdmin(ClusterMembership membership, Cleanup cleanup, Executor maintenance) {
        this.membership = membership;
        this.cleanup = cleanup;
        this.maintenance = maintenance;
    }

    @Override
    public ClusterView view() {
        return membership.membership().view();
    }

    @Override
    public boolean isMember() {
        return membership.isMember() && membership.membership().state(membership.selfId()) != null;
    }

    @Override
    public int normalMembers() {
        return membership.membership().normalCount();
    }

    @Override
    public int replicationFactor() {
        return membership.membership().replicationFactor();
    }

    @Override
    public CompletableFuture<ClusterView> leave(String id) {
        return change(MembershipChange.Kind.LEAVE, id);
    }

    @Override
    public CompletableFuture<ClusterView> remove(String id) {
        return change(MembershipChange.Kind.REMOVE, id);
    }

    private CompletableFuture<ClusterView> change(MembershipChange.Kind kind, String id) {
        Membership m = membership.membership();
        ClusterMember member = m.topology().member(id);
        if (member == null) {
            return CompletableFuture.failedFuture(new MembershipChangeException(MembershipChangeException.Reason.INVALID,
                    "'" + id + "' is not a member (members: " + m.topology().members().stream().map(ClusterMember::id).toList() + ")"));
        }
        return membership.change(new MembershipChange(kind, member)).thenApply(Membership::view);
    }

    @Override
    public CompletableFuture<Long> cleanup() {
        return CompletableFuture.supplyAsync(cleanup::run, maintenance);
    }
}
