package io.kvorum.node.cluster;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.stream.Collectors;

/**
 * A cluster's identity (docs/operations.md#cluster-identity): a digest of its {@code --cluster-name}, its replication factor
 * and the membership it was first started with (every member's id and addresses, in canonical
 * order). It is computed once, when a node seeds its stored {@link Membership}, and stays the same
 * through later membership changes. Nodes started with the same options, in any order, agree on
 * it; a node of another cluster does not, and its traffic is refused.
 *
 * <p>The default name with the default replication factor (every member a replica) gives the digest
 * of the member list alone, as before {@code --cluster-name} existed, so that upgrading a cluster
 * node by node does not split it.
 */
public final class ClusterIdentity {

    /** {@code --cluster-name}'s default. */
    public static final String DEFAULT_NAME = "kvorum";

    private ClusterIdentity() {
    }

    public static String of(String clusterName, Topology firstMembership, int replicationFactor) {
        String members = firstMembership.members().stream().map(ClusterMember::toString)
                .collect(Collectors.joining(","));
        String canonical = clusterName.equals(DEFAULT_NAME) && replicationFactor == firstMembership.size()
                ? members
                : clusterName + "/" + replicationFactor + "/" + members;
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
