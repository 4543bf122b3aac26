package io.kvorum.client.placement;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/**
 * Where each key lives: rendezvous (highest-random-weight) hashing over member ids, the one
 * implementation that both the node and the client use (docs/operations.md#how-replicas-converge).
 *
 * <p>For each key every member gets a pseudo-random score from (member id, key); the key's
 * preference list is the members by descending score, ties (astronomically rare) by ascending id.
 * Hence: deterministic, independent of the order in which members are given, the first
 * {@code count} members for a smaller count are a prefix of those for a larger one, and a member
 * joining or leaving moves only the keys it wins or held (about 1/N of them).
 *
 * <p><b>The hash functions place data and must never change</b>: a node would no longer find the
 * keys it stored, and clients would route to the wrong nodes. {@code RendezvousTest} pins them.
 *
 * <p>Immutable and thread-safe.
 */
public final class Rendezvous {

    private final List<String> ids;
    private final long[] seeds;

    private Rendezvous(String[] sortedIds) {
        this.ids = List.of(sortedIds);
        this.seeds = new long[sortedIds.length];
        for (int i = 0; i < sortedIds.length; i++) {
            seeds[i] = memberSeed(sortedIds[i]);
        }
    }

    /**
     * Placement over these members, in any order.
     *
     * @throws IllegalArgumentException when there is none, or an id is null, empty or given twice
     */
    public static Rendezvous over(Collection<String> memberIds) {
        String[] sorted = memberIds.toArray(String[]::new);
        if (sorted.length == 0) {
            throw new IllegalArgumentException("placement needs at least one member");
        }
        for (String id : sorted) {
            if (id == null || id.isEmpty()) {
                throw new IllegalArgumentException("member ids must not be null or empty: " + memberIds);
            }
        }
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i].equals(sorted[i - 1])) {
                throw new IllegalArgumentException("member id '" + sorted[i] + "' is given twice");
            }
        }
        return new Rendezvous(sorted);
    }

    /** The member ids, sorted ({@link String#compareTo}): the indices {@link #order} returns refer to this list. */
    public List<String> memberIds() {
        return ids;
    }

    public int size() {
        return ids.size();
    }

    /**
     * The first {@code count} members of the key's preference list, as indices into
     * {@link #memberIds()}: for callers that keep their own member objects in that order.
     *
     * @throws IllegalArgumentException unless 1 <= count <= {@link #size()}
     */
    public int[] order(byte[] key, int count) {
        int n = seeds.length;
        if (count < 1 || count > n) {
            throw new IllegalArgumentException("count " + count + " not in 1.." + n);
        }
        if (n == 1) {
            return new int[] {0};
        }
        long keyHash = keyHash(key);
        long[] scores = new long[n];
        for (int i = 0; i < n; i++) {
            scores[i] = score(keyHash, seeds[i]);
        }
        // The best count by insertion, highest score first. Members come in index order and a tie
        // does not move an earlier one down, so ties go by index, which is the order of ids. This
        // runs for every request, on the node and in the driver: no boxing, no comparator.
        int[] out = new int[count];
        int placed = 0;
        for (int i = 0; i < n; i++) {
            int at = placed;
            while (at > 0 && Long.compareUnsigned(scores[i], scores[out[at - 1]]) > 0) {
                at--;
            }
            if (at == count) {
                continue;
            }
            int kept = Math.min(placed, count - 1);
            System.arraycopy(out, at, out, at + 1, kept - at);
            out[at] = i;
            placed = kept + 1;
        }
        return out;
    }

    /**
     * The ids of the first {@code count} members of the key's preference list.
     *
     * @throws IllegalArgumentException unless 1 <= count <= {@link #size()}
     */
    public List<String> replicas(byte[] key, int count) {
        return replicas(key, count, ids);
    }

    /**
     * The first {@code count} members of the key's preference list, taken from {@code members},
     * the caller's objects for the members in the order of {@link #memberIds()}.
     *
     * @throws IllegalArgumentException unless 1 <= count <= {@link #size()}, or when
     *                                  {@code members} is not of {@link #size()}
     */
    public <T> List<T> replicas(byte[] key, int count, List<T> members) {
        if (members.size() != ids.size()) {
            throw new IllegalArgumentException(members.size() + " members given for " + ids.size() + " ids");
        }
        int[] order = order(key, count);
        List<T> out = new ArrayList<>(count);
        for (int i : order) {
            out.add(members.get(i));
        }
        return Collections.unmodifiableList(out);
    }

    /** A key's hash: FNV-1a over its bytes, then {@link #mix}. */
    public static long keyHash(byte[] key) {
        return hash(key);
    }

    /** A member's seed: the same hash over the UTF-8 bytes of its id. */
    public static long memberSeed(String memberId) {
        return hash(memberId.getBytes(StandardCharsets.UTF_8));
    }

    /** A member's score for a key; members are ordered by it as unsigned, highest first. */
    public static long score(long keyHash, long memberSeed) {
        return mix(keyHash ^ memberSeed);
    }

    private static long hash(byte[] bytes) {
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
