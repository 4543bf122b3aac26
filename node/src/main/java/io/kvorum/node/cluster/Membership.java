package io.kvorum.node.cluster;

import io.kvorum.client.placement.ClusterView;
import java.util.regex.Pattern;

/**
 * A cluster's membership as a node keeps it in its data dir (SPEC §8): the cluster's name and
 * {@link ClusterIdentity identity}, an epoch that grows with each change, the members, and the
 * replication factor, which is fixed from the cluster's first start. Today every member is
 * {@code normal}: joins and leaves are to come.
 *
 * @param identity fixed at the first membership and kept through every later one
 */
public record Membership(String clusterName, String identity, long epoch, Topology topology, int replicationFactor) {

    /** The epoch of the membership {@code --cluster} seeds. */
    public static final long FIRST_EPOCH = 1;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

    public Membership {
        if (!isClusterName(clusterName)) {
            throw new IllegalArgumentException("not a cluster name: '" + clusterName + "'");
        }
        if (epoch < FIRST_EPOCH) {
            throw new IllegalArgumentException("epoch " + epoch + " is below " + FIRST_EPOCH);
        }
        if (replicationFactor < 1 || replicationFactor > topology.size()) {
            throw new IllegalArgumentException("replication factor " + replicationFactor + " is not between 1 and "
                    + topology.size() + ", the number of members");
        }
    }

    /** The membership a cluster is first started with. */
    public static Membership first(String clusterName, Topology topology, int replicationFactor) {
        return new Membership(clusterName, ClusterIdentity.of(clusterName, topology, replicationFactor), FIRST_EPOCH,
                topology, replicationFactor);
    }

    public static boolean isClusterName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    /** As {@code GET /v0/cluster} shows it. */
    public ClusterView view() {
        return new ClusterView(clusterName, epoch, topology.members().stream()
                .map(m -> new ClusterView.Member(m.id(), m.host(), m.httpPort(), m.grpcPort(), ClusterView.Member.NORMAL))
                .toList(), replicationFactor);
    }
}
