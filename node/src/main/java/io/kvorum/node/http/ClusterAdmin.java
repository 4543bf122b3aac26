package io.kvorum.node.http;

import io.kvorum.client.placement.ClusterView;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The membership as the HTTP API shows and changes it (docs/operations.md#growing-and-shrinking-a-cluster): {@code GET /v0/cluster},
 * {@code POST /v0/cluster/leave|remove?id=}, {@code POST /v0/cleanup}, and the bounds of
 * {@code from}. A refused change fails with a {@link io.kvorum.node.error.RequestException}
 * (409, 503 or 400).
 */
public interface ClusterAdmin {

    /** The membership this node knows. */
    ClusterView view();

    /**
     * Whether this node is a member: false once it left or was removed (a new node serves HTTP only
     * once its join was accepted). A node that is not one answers client requests and
     * {@code GET /v0/status} 503.
     */
    boolean isMember();

    /** How many members are normal: the largest {@code from} a request may name. */
    int normalMembers();

    /** The default {@code from}. */
    int replicationFactor();

    /** Starts member {@code id}'s leave; completes once every member knows it is leaving. */
    CompletableFuture<ClusterView> leave(String id);

    /** Removes member {@code id} at once; completes once every other member knows. */
    CompletableFuture<ClusterView> remove(String id);

    /** Drops the records this node no longer replicates; completes with how many. */
    CompletableFuture<Long> cleanup();

    /** A static cluster's (tests): changes are refused as bad requests. */
    static ClusterAdmin fixed(Supplier<ClusterView> view, int normalMembers, int replicationFactor) {
        return fixed(view, normalMembers, replicationFactor, () -> true);
    }

    /** As {@link #fixed(Supplier, int, int)}, with this node a member while {@code isMember} says so. */
    static ClusterAdmin fixed(Supplier<ClusterView> view, int normalMembers, int replicationFactor,
                              BooleanSupplier isMember) {
        return new ClusterAdmin() {
            @Override
            public ClusterView view() {
                return view.get();
            }

            @Override
            public boolean isMember() {
                return isMember.getAsBoolean();
            }

            @Override
            public int normalMembers() {
                return normalMembers;
            }

            @Override
            public int replicationFactor() {
                return replicationFactor;
            }

            @Override
            public CompletableFuture<ClusterView> leave(String id) {
                return CompletableFuture.failedFuture(new BadRequestException("this cluster's membership is fixed"));
            }

            @Override
            public CompletableFuture<ClusterView> remove(String id) {
                return leave(id);
            }

            @Override
            public CompletableFuture<Long> cleanup() {
                return CompletableFuture.completedFuture(0L);
            }
        };
    }
}
