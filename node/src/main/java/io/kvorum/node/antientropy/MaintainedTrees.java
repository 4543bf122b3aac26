package io.kvorum.node.antientropy;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.storage.BucketIndex;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.util.Pace;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * This node's Merkle-tree leaves for each peer's scope, kept up to date as the store changes, so
 * that a round costs the size of the trees plus what changed since the last round, not a read of
 * every record.
 *
 * <p>How: {@link LevelDbStore} reports the bucket of every change it commits (a client write, a
 * hint, a read repair, a received repair record, a purge), which marks that leaf dirty. Before a
 * tree goes to a round, every dirty leaf is recomputed from the {@link BucketIndex}: the sum of the
 * record hashes of its keys, per scope. A leaf's bit is cleared before its index is read, and a
 * change is reported after it is committed, so a change is either in the read or leaves its leaf
 * dirty: a leaf is never clean and stale. Nothing of this survives the process: at start every
 * leaf is dirty and the first {@link #refresh} (scheduled at once, paced) computes them all; the
 * index it reads is in the same write batches as the records, so no crash separates the two.
 *
 * <p>Scopes: a peer's tree covers the keys whose first {@code replicationFactor} replicas include
 * this node and the peer ({@link RepairScope}). When every key is on every node (the replication
 * factor is the cluster size) all peers share one array of leaves and one sealed tree, computed
 * once per round whatever the number of peers; otherwise there is one array per peer, all
 * refreshed by the same pass over the index.
 *
 * <p>Memory: 12 bytes a leaf per array (a hash and a count: 12 MiB at the default 2^20 leaves),
 * plus one sealed copy per array while a round uses it; whatever the number of keys.
 *
 * <p>Threading: {@link #changed} is lock-free and may run on any thread (the storage writer);
 * everything else runs on the anti-entropy reader thread, which confines the leaves.
 */
final class MaintainedTrees {

    private final LevelDbStore store;
    private final String selfId;
    private final Placement placement;
    private final int replicationFactor;
    private final boolean everyKeyEverywhere;
    private final int fanoutBits;
    private final int depth;
    private final int shift;
    private final Map<String, Integer> scopeOfPeer = new HashMap<>();
    private final long[][] leaves;
    private final int[][] counts;
    private final long[] records;
    private final MerkleTree[] sealed;
    private final AtomicLongArray dirty;
    private final Pace indexPace;
    private volatile boolean built;
    private volatile long lastRefreshMillis;

    /**
     * @param indexEntriesPerSecond how fast a refresh may read the index
     */
    MaintainedTrees(LevelDbStore store, String selfId, Topology topology, int replicationFactor,
                    int fanoutBits, int depth, double indexEntriesPerSecond) {
        if (!MerkleTree.isValidShape(fanoutBits, depth)) {
            throw new IllegalArgumentException("unsupported tree shape: fanout bits " + fanoutBits + ", depth " + depth);
        }
        this.store = store;
        this.selfId = selfId;
        this.placement = new Placement(topology);
        this.replicationFactor = replicationFactor;
        this.everyKeyEverywhere = replicationFactor >= topology.size();
        this.fanoutBits = fanoutBits;
        this.depth = depth;
        this.shift = BucketIndex.BUCKET_BITS - fanoutBits * depth;
        List<String> peers = new ArrayList<>();
        for (ClusterMember m : topology.members()) {
            if (!m.id().equals(selfId)) {
                scopeOfPeer.put(m.id(), everyKeyEverywhere ? 0 : peers.size());
                peers.add(m.id());
            }
        }
        int scopes = everyKeyEverywhere ? Math.min(1, peers.size()) : peers.size();
        int leafCount = 1 << (fanoutBits * depth);
        this.leaves = new long[scopes][leafCount];
        this.counts = new int[scopes][leafCount];
        this.records = new long[scopes];
        this.sealed = new MerkleTree[scopes];
        this.dirty = new AtomicLongArray((leafCount + 63) / 64);
        for (int w = 0; w < dirty.length(); w++) {
            dirty.set(w, leafCount - w * 64 >= 64 ? -1L : (1L << (leafCount - w * 64)) - 1);
        }
        this.indexPace = Pace.steady(indexEntriesPerSecond);
        store.onChangedBuckets(this::changed);
    }

    /** Marks the leaf of a changed {@link BucketIndex} bucket dirty; any thread, never blocks. */
    void changed(int bucket) {
        int leaf = bucket >>> shift;
        long bit = 1L << (leaf & 63);
        int word = leaf >>> 6;
        long seen = dirty.get(word);
        while ((seen & bit) == 0 && !dirty.compareAndSet(word, seen, seen | bit)) {
            seen = dirty.get(word);
        }
    }

    /** Whether this tree serves a round of {@code scope} with trees of this shape. */
    boolean serves(RepairScope scope, int fanoutBits, int depth) {
        return scope.replicationFactor() == replicationFactor && fanoutBits == this.fanoutBits
                && depth == this.depth && scope.includes(selfId) && scopeOfPeer.containsKey(scope.otherThan(selfId));
    }

    /**
     * The current tree of the scope of a round ({@link #serves} must hold), sealed: immutable, so
     * that rounds may share it. On the reader thread; blocks while it refreshes dirty leaves.
     */
    MerkleTree treeFor(RepairScope scope) {
        refresh();
        int s = scopeOfPeer.get(scope.otherThan(selfId));
        if (sealed[s] == null) {
            sealed[s] = MerkleTree.ofLeaves(fanoutBits, depth, leaves[s], records[s]);
        }
        return sealed[s];
    }

    /**
     * Recomputes every dirty leaf from the index, through one snapshot of it taken after every
     * dirty bit was cleared (see the class comment), so both sides of a round see their stores as
     * of about the moment the round asked. On the reader thread.
     */
    void refresh() {
        long[] taken = new long[dirty.length()];
        // Runs of neighbouring words with dirty leaves, as [first word, end word) pairs: one seek
        // of the index each. Under steady writes nearly every word is dirty; a seek per word
        // (16,384 at the default shape) took a quarter of a refresh's CPU at 30,000 writes/s.
        List<Integer> runs = new ArrayList<>();
        int runStart = -1;
        for (int w = 0; w < taken.length; w++) {
            taken[w] = dirty.getAndSet(w, 0);
            if (taken[w] != 0) {
                forget(w, taken[w]);
                if (runStart < 0) {
                    runStart = w;
                }
            } else if (runStart >= 0) {
                runs.add(runStart);
                runs.add(w);
                runStart = -1;
            }
        }
        if (runStart >= 0) {
            runs.add(runStart);
            runs.add(taken.length);
        }
        if (!runs.isEmpty()) {
            int[] bounds = new int[runs.size()];
            for (int i = 0; i < bounds.length; i++) {
                bounds[i] = Math.min(runs.get(i) * 64, leafCount()) << shift;
            }
            int[] scanned = {0};
            store.forEachIndexed(bounds, null, e -> {
                int leaf = e.bucket() >>> shift;
                if ((taken[leaf >>> 6] & (1L << (leaf & 63))) != 0) {
                    add(leaf, e);
                }
                if (++scanned[0] == RepairStorage.PACE_CHUNK) {
                    indexPace.acquire(scanned[0]);
                    scanned[0] = 0;
                }
                return true;
            });
            Arrays.fill(sealed, null);
        }
        built = true;
        lastRefreshMillis = System.currentTimeMillis();
    }

    /** Zeroes the dirty leaves of one word before they are summed again. */
    private void forget(int word, long bits) {
        for (long b = bits; b != 0; b &= b - 1) {
            int leaf = word * 64 + Long.numberOfTrailingZeros(b);
            for (int s = 0; s < leaves.length; s++) {
                records[s] -= counts[s][leaf];
                counts[s][leaf] = 0;
                leaves[s][leaf] = 0;
            }
        }
    }

    private void add(int leaf, BucketIndex.IndexEntry e) {
        if (everyKeyEverywhere) {
            if (leaves.length > 0) {
                addTo(0, leaf, e.recordHash());
            }
            return;
        }
        List<ClusterMember> replicas = placement.replicasFor(e.key(), replicationFactor);
        boolean self = false;
        for (ClusterMember m : replicas) {
            self |= m.id().equals(selfId);
        }
        if (!self) {
            return; // not this node's key (stored before a topology change): in no scope
        }
        for (ClusterMember m : replicas) {
            Integer s = scopeOfPeer.get(m.id());
            if (s != null) {
                addTo(s, leaf, e.recordHash());
            }
        }
    }

    private void addTo(int scope, int leaf, long recordHash) {
        leaves[scope][leaf] += recordHash;
        counts[scope][leaf]++;
        records[scope]++;
    }

    private int leafCount() {
        return 1 << (fanoutBits * depth);
    }

    /** Whether every leaf was computed at least once since start. */
    boolean isBuilt() {
        return built;
    }

    /** When the last refresh ended (epoch ms), 0 before the first. */
    long lastRefreshMillis() {
        return lastRefreshMillis;
    }
}
