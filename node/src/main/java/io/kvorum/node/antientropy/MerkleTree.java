package io.kvorum.node.antientropy;

import static io.kvorum.node.storage.BucketIndex.keyHash;
import static io.kvorum.node.storage.BucketIndex.mix;
import static io.kvorum.node.storage.BucketIndex.recordHash;

import io.kvorum.node.model.Record;
import io.kvorum.node.storage.BucketIndex;

/**
 * A Merkle tree of fixed shape over a set of records: what two replicas compare to find, without
 * sending their data, the hash buckets in which they differ.
 *
 * <p>Shape: every inner node has {@code 2^fanoutBits} children and the leaves are {@link #depth()}
 * levels below the root, so there are {@code 2^(fanoutBits * depth)} leaves. Level 0 is the root;
 * level {@code depth} holds the leaves. A key belongs to the leaf (bucket) given by the top bits of
 * a hash of the key ({@link #bucketOf}), the same on every node, so both replicas put a key in the
 * same bucket whatever else they hold.
 *
 * <p>Hashes: a leaf is the sum (mod 2^64) of {@link #recordHash} over its records, which is
 * independent of the order in which records are added, so a tree is one streaming scan in any
 * order. A record hash covers the key and the version (timestamp, writer, tombstone, expiry), not
 * the value bytes: a version identifies its value in a correct cluster. Tombstones and expired
 * records are records like any other, so deletes and expiries propagate. An inner node mixes its
 * children in order.
 *
 * <p>Memory: about {@code 8 * leaves * fanout / (fanout - 1)} bytes, whatever the number of
 * records (8.4 MiB for the default 1,048,576 leaves).
 *
 * <p>Lifecycle and threading: {@link #add} records, then {@link #seal()} once; only a sealed tree
 * answers {@link #hash}. Not thread-safe while being built; immutable once sealed.
 */
public final class MerkleTree {

    /** 16 children per inner node. */
    public static final int DEFAULT_FANOUT_BITS = 4;
    /**
     * Five levels below the root: 1,048,576 leaves, about one key each at a million keys, so a
     * differing key costs its own record and few others (at 65,536 leaves it cost about 15: see
     * perf/README.md, "Anti-entropy").
     */
    public static final int DEFAULT_DEPTH = 5;
    /** More leaves than the default is refused, also from a peer: a served round's tree stays at 8.4 MiB. */
    static final int MAX_LEAF_BITS = 20;

    private final int fanoutBits;
    private final int depth;
    private final long[][] levels;
    private long records;
    private boolean sealed;

    /**
     * An empty tree of the given shape.
     *
     * @throws IllegalArgumentException when the shape is not 1..8 fanout bits, depth >= 1, and at
     *                                  most 2^{@value #MAX_LEAF_BITS} leaves
     */
    public MerkleTree(int fanoutBits, int depth) {
        if (!isValidShape(fanoutBits, depth)) {
            throw new IllegalArgumentException("unsupported tree shape: fanout bits " + fanoutBits + ", depth " + depth);
        }
        this.fanoutBits = fanoutBits;
        this.depth = depth;
        this.levels = new long[depth + 1][];
        for (int level = 0; level <= depth; level++) {
            levels[level] = new long[1 << (fanoutBits * level)];
        }
    }

    /** An empty tree of the default shape. */
    public static MerkleTree withDefaultShape() {
        return new MerkleTree(DEFAULT_FANOUT_BITS, DEFAULT_DEPTH);
    }

    /** Whether a tree of this shape may be built (what a responder accepts from a peer). */
    public static boolean isValidShape(int fanoutBits, int depth) {
        return fanoutBits >= 1 && fanoutBits <= 8 && depth >= 1 && fanoutBits * depth <= MAX_LEAF_BITS;
    }

    public int fanoutBits() {
        return fanoutBits;
    }

    public int depth() {
        return depth;
    }

    public int leafCount() {
        return levels[depth].length;
    }

    /** Nodes at a level: 1 at the root, {@link #leafCount()} at level {@link #depth()}. */
    public int levelSize(int level) {
        return levels[level].length;
    }

    /** Records added so far. */
    public long recordCount() {
        return records;
    }

    /** The leaf (bucket) of a key in a tree of this shape. */
    public int bucketOf(byte[] key) {
        return bucketOf(key, fanoutBits * depth);
    }

    /** The bucket of a key among {@code 2^leafBits}: the top bits of its hash. */
    static int bucketOf(byte[] key, int leafBits) {
        return (int) (keyHash(key) >>> (64 - leafBits));
    }

    /** Adds one record of {@code key} to its leaf. */
    public void add(byte[] key, Record record) {
        if (sealed) {
            throw new IllegalStateException("the tree is sealed");
        }
        long keyHash = keyHash(key);
        levels[depth][(int) (keyHash >>> (64 - fanoutBits * depth))] += recordHash(keyHash, record);
        records++;
    }

    /**
     * Adds the hash of one record already known to belong to {@code leaf} (what a
     * {@link BucketIndex} entry holds); counts as one record.
     */
    public void addHash(int leaf, long recordHash) {
        if (sealed) {
            throw new IllegalStateException("the tree is sealed");
        }
        levels[depth][leaf] += recordHash;
        records++;
    }

    /** A sealed tree whose leaves are a copy of {@code leaves} ({@code 2^(fanoutBits * depth)} of them). */
    static MerkleTree ofLeaves(int fanoutBits, int depth, long[] leaves, long records) {
        MerkleTree tree = new MerkleTree(fanoutBits, depth);
        System.arraycopy(leaves, 0, tree.levels[depth], 0, tree.levels[depth].length);
        tree.records = records;
        return tree.seal();
    }

    /** Computes the inner nodes; afterwards the tree is read-only. Returns this tree. */
    public MerkleTree seal() {
        if (!sealed) {
            int fanout = 1 << fanoutBits;
            for (int level = depth - 1; level >= 0; level--) {
                long[] children = levels[level + 1];
                long[] nodes = levels[level];
                for (int i = 0; i < nodes.length; i++) {
                    long h = 0x243f6a8885a308d3L;
                    for (int c = i * fanout; c < (i + 1) * fanout; c++) {
                        h = mix(h ^ children[c]) + 0x9e3779b97f4a7c15L;
                    }
                    nodes[i] = h;
                }
            }
            sealed = true;
        }
        return this;
    }

    /** The hash of node {@code index} of {@code level}; the tree must be sealed. */
    public long hash(int level, int index) {
        if (!sealed) {
            throw new IllegalStateException("the tree is not sealed");
        }
        return levels[level][index];
    }

    /** Whether {@code index} names a node of {@code level}. */
    public boolean hasNode(int level, int index) {
        return level >= 0 && level <= depth && index >= 0 && index < levels[level].length;
    }
}
