package io.kvorum.node.cluster;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.stream.Collectors;

/**
 * A cluster's identity: a digest of its whole topology (every member's id and addresses, in
 * canonical order). Two nodes started with the same {@code --cluster}, in any order, agree on it;
 * a node of another cluster, or one with a different topology, does not, and its traffic is
 * refused (SPEC §5).
 */
public final class ClusterIdentity {

    private ClusterIdentity() {
    }

    public static String of(Topology topology) {
        String canonical = topology.members().stream().map(ClusterMember::toString).collect(Collectors.joining(","));
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
