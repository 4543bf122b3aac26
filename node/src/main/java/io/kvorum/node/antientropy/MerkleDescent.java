package io.kvorum.node.antientropy;

import io.kvorum.node.antientropy.AntiEntropyMessage.HashQuery;
import java.util.Arrays;

/**
 * The initiator's walk down two trees of the same shape, level by level: it asks for the peer's
 * hashes of the root, then of the children of every node that differs, down to the leaves, so that
 * identical trees cost one hash and each differing leaf costs {@code depth * fanout} hashes at most.
 *
 * <p>Use: {@link #nextQuery()} gives a query (at most {@code maxIndices} nodes of one level), the
 * peer answers it, {@link #onHashes} takes the answer; repeat until {@code nextQuery()} returns
 * null, then {@link #differingLeaves()} are the buckets to exchange. One query is outstanding at a
 * time. Memory is bounded by the tree shape (at most one level of indices).
 *
 * <p>Not thread-safe.
 */
public final class MerkleDescent {

    private final int fanoutBits;
    private final int depth;
    private final int maxIndices;
    private int level;
    private int[] toAsk = {0};
    private int asked;
    private IntList differing = new IntList();
    private HashQuery outstanding;
    private int[] result;

    /**
     * @param fanoutBits the shape of both trees, as in {@link MerkleTree}
     * @param depth      the shape of both trees, as in {@link MerkleTree}
     * @param maxIndices the most nodes one query may ask for
     */
    public MerkleDescent(int fanoutBits, int depth, int maxIndices) {
        if (!MerkleTree.isValidShape(fanoutBits, depth) || maxIndices < 1) {
            throw new IllegalArgumentException("bad descent: fanout bits " + fanoutBits + ", depth " + depth
                    + ", max indices " + maxIndices);
        }
        this.fanoutBits = fanoutBits;
        this.depth = depth;
        this.maxIndices = maxIndices;
    }

    /** The next nodes to ask the peer for, or null when the walk is over. The first query is always the root. */
    public HashQuery nextQuery() {
        if (outstanding != null) {
            throw new IllegalStateException("the previous query is unanswered");
        }
        while (result == null && asked == toAsk.length) {
            if (level == depth || differing.size() == 0) {
                result = level == depth ? differing.toArray() : new int[0];
                break;
            }
            toAsk = childrenOf(differing);
            differing = new IntList();
            level++;
            asked = 0;
        }
        if (result != null) {
            return null;
        }
        int end = Math.min(toAsk.length, asked + maxIndices);
        outstanding = new HashQuery(level, Arrays.copyOfRange(toAsk, asked, end));
        asked = end;
        return outstanding;
    }

    /**
     * Takes the peer's answer to the outstanding query and compares it with {@code local}.
     *
     * @throws IllegalArgumentException when the answer does not fit the query (a protocol error)
     */
    public void onHashes(MerkleTree local, int answeredLevel, long[] remote) {
        HashQuery query = outstanding;
        if (query == null) {
            throw new IllegalArgumentException("hashes without a query");
        }
        if (answeredLevel != query.level() || remote.length != query.indices().length) {
            throw new IllegalArgumentException("answer of " + remote.length + " hashes at level " + answeredLevel
                    + " to a query of " + query.indices().length + " at level " + query.level());
        }
        if (local.fanoutBits() != fanoutBits || local.depth() != depth) {
            throw new IllegalStateException("local tree of another shape");
        }
        outstanding = null;
        int[] indices = query.indices();
        for (int i = 0; i < indices.length; i++) {
            if (local.hash(query.level(), indices[i]) != remote[i]) {
                differing.add(indices[i]);
            }
        }
    }

    /** Whether the walk is over ({@link #nextQuery()} returned null). */
    public boolean isFinished() {
        return result != null;
    }

    /** The leaves whose hashes differ, ascending; only once the walk is over. */
    public int[] differingLeaves() {
        if (result == null) {
            throw new IllegalStateException("the walk is not over");
        }
        return result.clone();
    }

    private int[] childrenOf(IntList nodes) {
        int fanout = 1 << fanoutBits;
        int[] children = new int[nodes.size() * fanout];
        for (int i = 0; i < nodes.size(); i++) {
            for (int c = 0; c < fanout; c++) {
                children[i * fanout + c] = (nodes.get(i) << fanoutBits) + c;
            }
        }
        return children;
    }

    /** A growable int array: one level of a tree, without boxing. */
    private static final class IntList {
        private int[] values = new int[16];
        private int size;

        void add(int v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        int get(int i) {
            return values[i];
        }

        int size() {
            return size;
        }

        int[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }
}
