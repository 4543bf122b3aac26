package io.kvorum.node.cluster;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Where a key's requests go under one {@link Membership} (docs/operations.md#growing-and-shrinking-a-cluster): reads to the key's replicas
 * among the membership's {@link Membership#readers readers}; writes to its replicas under the
 * {@link Membership#current current} membership and, during a change, under the
 * {@link Membership#coming coming} one too, and a write then needs its {@code ack} in each of the
 * two sets. Immutable; one per epoch.
 */
public final class PlacementPlan {

    private final Membership membership;
    private final Placement readers;
    private final Placement current;
    /** Null when no change is in progress. */
    private final Placement coming;

    public PlacementPlan(Membership membership) {
        this.membership = membership;
        this.current = new Placement(membership.current());
        this.coming = membership.inChange() ? new Placement(membership.coming()) : null;
        this.readers = membership.readsFromComing() ? coming : current;
    }

    /** A static cluster's plan: every member normal and a replica of every key (tests). */
    public static PlacementPlan of(Placement placement) {
        Topology t = placement.topology();
        return new PlacementPlan(Membership.first(ClusterIdentity.DEFAULT_NAME, t, t.size()));
    }

    public Membership membership() {
        return membership;
    }

    /** The first {@code from} replicas of the key among the readers (1 <= from <= normal members). */
    public List<ClusterMember> readReplicas(byte[] key, int from) {
        return readers.replicasFor(key, from);
    }

    /**
     * Where a write goes: every target once, and the groups that must each reach {@code ack}: one
     * group, or two during a change (the current replicas and the coming ones, which overlap).
     */
    public WriteTargets writeTargets(byte[] key, int from) {
        List<ClusterMember> now = current.replicasFor(key, from);
        if (coming == null) {
            return new WriteTargets(now, List.of(ids(now)));
        }
        List<ClusterMember> next = coming.replicasFor(key, from);
        Set<String> nowIds = ids(now);
        Set<String> nextIds = ids(next);
        if (nowIds.equals(nextIds)) {
            return new WriteTargets(now, List.of(nowIds));
        }
        List<ClusterMember> all = new ArrayList<>(now);
        next.stream().filter(m -> !nowIds.contains(m.id())).forEach(all::add);
        return new WriteTargets(all, List.of(nowIds, nextIds));
    }

    /** Whether {@code nodeId} is among the key's first {@code count} replicas under the coming membership. */
    public boolean comingReplica(byte[] key, int count, String nodeId) {
        Placement p = coming != null ? coming : current;
        return p.replicasFor(key, Math.min(count, p.size())).stream().anyMatch(m -> m.id().equals(nodeId));
    }

    private static Set<String> ids(List<ClusterMember> members) {
        Set<String> ids = new LinkedHashSet<>();
        members.forEach(m -> ids.add(m.id()));
        return ids;
    }

    /**
     * @param members every node the write goes to
     * @param groups  node ids; the write succeeds once each group has {@code ack} successes, and fails
     *                once any group can no longer reach it
     */
    public record WriteTargets(List<ClusterMember> members, List<Set<String>> groups) {
    }
}
