package io.kvorum.node.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Rendezvous (highest-random-weight) hashing: for each key, every node gets a pseudo-random score
 * from (node id, key); the key's preference list is the nodes by descending score. Hence, as
 * SPEC §3 requires: deterministic, independent of the order of {@code --cluster}, the first
 * {@code from} nodes for a smaller {@code from} are a prefix of those for a larger one, and a node
 * joining or leaving moves only the keys it wins or held (about 1/N of them).
 */
public final class Placement {

    private final ClusterMember[] members;
    private final long[] memberSeeds;

    public Placement(Topology topology) {
        this.members = topology.members().toArray(ClusterMember[]::new);
        this.memberSeeds = new long[members.length];
        for (int i = 0; i < members.length; i++) {
            memberSeeds[i] = hash(members[i].id().getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The first {@code count} nodes of the key's preference list (1 <= count <= cluster size). */
    public List<ClusterMember> replicasFor(byte[] key, int count) {
        if (count < 1 || count > members.length) {
            throw new IllegalArgumentException("count " + count + " not in 1.." + members.length);
        }
        long keyHash = hash(key);
        int n = members.length;
        long[] scores = new long[n];
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            scores[i] = mix(keyHash ^ memberSeeds[i]);
            order[i] = i;
        }
        // Highest score first; ties (astronomically rare) by id, which members are sorted by.
        Arrays.sort(order, (a, b) -> {
            int c = Long.compareUnsigned(scores[b], scores[a]);
            return c != 0 ? c : Integer.compare(a, b);
        });
        ClusterMember[] out = new ClusterMember[count];
        for (int i = 0; i < count; i++) {
            out[i] = members[order[i]];
        }
        return List.of(out);
    }

    /** FNV-1a over the bytes, then a strong finalizer. Stable across versions: it places data. */
    static long hash(byte[] bytes) {
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return mix(h);
    }

    /** The splitmix64 finalizer: every input bit affects every output bit. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
