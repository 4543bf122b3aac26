package io.kvorum.node.antientropy;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import java.util.List;

/**
 * The keys that one pair of nodes compares in a round: those whose first {@code replicationFactor}
 * replicas (docs/operations.md#how-replicas-converge) include both. Symmetric: both sides of a round compute the same set.
 */
public record RepairScope(Placement placement, int replicationFactor, String nodeA, String nodeB) {

    /** Whether both nodes are among the key's first replicas. */
    public boolean covers(byte[] key) {
        List<ClusterMember> replicas = placement.replicasFor(key, replicationFactor);
        boolean a = false;
        boolean b = false;
        for (ClusterMember m : replicas) {
            a |= m.id().equals(nodeA);
            b |= m.id().equals(nodeB);
        }
        return a && b;
    }

    /** Whether {@code nodeId} is one of the pair. */
    public boolean includes(String nodeId) {
        return nodeA.equals(nodeId) || nodeB.equals(nodeId);
    }

    /** The node of the pair that is not {@code nodeId}. */
    public String otherThan(String nodeId) {
        return nodeA.equals(nodeId) ? nodeB : nodeA;
    }

    @Override
    public String toString() {
        return "keys replicated on " + nodeA + " and " + nodeB + " (RF " + replicationFactor + ")";
    }
}
