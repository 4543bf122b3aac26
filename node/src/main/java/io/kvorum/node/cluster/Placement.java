package io.kvorum.node.cluster;

import io.kvorum.client.placement.Rendezvous;
import java.util.List;

/**
 * Where each key lives among the members of a {@link Topology}: {@link Rendezvous} hashing, the
 * same code the client routes by. As docs/operations.md#how-replicas-converge requires: deterministic, independent of the order of
 * {@code --cluster}, and the first {@code from} nodes for a smaller {@code from} are a prefix of
 * those for a larger one.
 */
public final class Placement {

    private final Topology topology;
    private final Rendezvous rendezvous;
    /** The members in the order of {@link Rendezvous#memberIds()}. */
    private final List<ClusterMember> members;

    public Placement(Topology topology) {
        this.topology = topology;
        this.rendezvous = Rendezvous.over(topology.members().stream().map(ClusterMember::id).toList());
        this.members = rendezvous.memberIds().stream().map(topology::member).toList();
    }

    public Topology topology() {
        return topology;
    }

    /** How many members it places over. */
    public int size() {
        return members.size();
    }

    /** The first {@code count} nodes of the key's preference list (1 <= count <= cluster size). */
    public List<ClusterMember> replicasFor(byte[] key, int count) {
        return rendezvous.replicas(key, count, members);
    }
}
