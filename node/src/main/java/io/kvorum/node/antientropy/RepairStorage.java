package io.kvorum.node.antientropy;

import io.kvorum.node.antientropy.RepairException.Reason;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.coordinator.LocalReplica;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.storage.BucketIndex;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.util.NodeThreads;
import io.kvorum.node.util.Pace;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * This node's records as anti-entropy sees them: the Merkle tree of a round's scope, the records of
 * chosen buckets, and received records written through the normal compare-then-write of the local
 * {@link LocalReplica} (last write wins; the node's clock moves past their timestamps).
 *
 * <p>Trees come from {@link MaintainedTrees} when the round uses this node's own shape and
 * replication factor, and otherwise from one pass over the {@link BucketIndex}; records of a
 * bucket are found through the index too. Neither reads every record the node holds.
 *
 * <p>Pacing: all of it runs on a reader thread of its own ({@code anti-entropy-reader}), never on
 * the storage readers that serve clients, and at most {@link Pacing#recordsPerSecond} records and
 * {@link Pacing#bytesPerSecond} bytes a second are read for an exchange, and
 * {@link Pacing#indexEntriesPerSecond} index entries for trees.
 *
 * <p>Memory: a bucket scan holds one batch of {@value #SCAN_ENTRIES} entries or about
 * {@value #SCAN_BYTES} bytes at a time, whatever the size of the store.
 *
 * <p>Lifecycle: {@link #close} stops the reader (rounds in progress fail); the storage must stay
 * open until then.
 */
public final class RepairStorage implements AutoCloseable {

    static final int SCAN_ENTRIES = 1024;
    /** Index entries read between two waits for the pace: well under a millisecond of work. */
    static final int PACE_CHUNK = 256;
    static final int SCAN_BYTES = 1 << 20;

    /**
     * How fast anti-entropy may read.
     *
     * @param recordsPerSecond      records read for an exchange (--anti-entropy-rate)
     * @param bytesPerSecond        bytes of those records (--anti-entropy-bandwidth)
     * @param indexEntriesPerSecond index entries read to compute trees
     */
    public record Pacing(long recordsPerSecond, long bytesPerSecond, long indexEntriesPerSecond) {
        /**
         * Index entries are small (a key and 8 bytes): reading them is cheap next to records. A
         * quarter of a million a second keeps a refresh under writes to a fraction of one core
         * (a refresh of 100,000 dirty entries takes 0.4 s), and computes the trees of a million
         * keys in about 4 s after a start.
         */
        public static final long INDEX_ENTRIES_PER_SECOND = 250_000;

        /**
         * 2,000 records a second for each peer: measured on 2 cores, a replica repaired at 20,000
         * (or 5,000) while clients sent 10,000 requests a second took so much of the machine that
         * client latency reached seconds at the median (perf/README.md, "Repairing a wiped
         * replica under load").
         */
        public static final Pacing DEFAULT = new Pacing(2_000, 32 << 20, INDEX_ENTRIES_PER_SECOND);
    }

    private final StorageService storage;
    private final LocalReplica local;
    private final Pacing pacing;
    private final ExecutorService reader = NodeThreads.singleExecutor("anti-entropy-reader");
    private final Pace recordPace;
    private final Pace bytePace;
    private final Pace indexPace;
    private volatile MaintainedTrees trees;

    public RepairStorage(StorageService storage, LocalReplica local) {
        this(storage, local, Pacing.DEFAULT);
    }

    /** @param local this node's replica, which writes received records */
    public RepairStorage(StorageService storage, LocalReplica local, Pacing pacing) {
        this.storage = storage;
        this.local = local;
        this.pacing = pacing;
        this.recordPace = Pace.steady(pacing.recordsPerSecond());
        this.bytePace = Pace.steady(pacing.bytesPerSecond());
        this.indexPace = Pace.steady(pacing.indexEntriesPerSecond());
    }

    /**
     * Keeps the trees of this node's rounds (its id, replication factor and tree shape) up to date
     * from now on, and starts computing them in the background: before the first round, and again
     * when the membership changes. A store without a bucket index (a node started alone) has none:
     * each round then builds its tree by a scan.
     */
    public void maintainTrees(String selfId, Topology topology, int replicationFactor, int fanoutBits, int depth) {
        if (!storage.store().isIndexed()) {
            trees = null;
            return;
        }
        MaintainedTrees maintained = new MaintainedTrees(storage.store(), selfId, topology, replicationFactor,
                fanoutBits, depth, pacing.indexEntriesPerSecond());
        trees = maintained;
        onReader(() -> {
            maintained.refresh();
            return null;
        });
    }

    /** The state of the maintained trees, for status: null before {@link #maintainTrees}. */
    public TreeState treeState() {
        MaintainedTrees t = trees;
        return t == null ? null : new TreeState(t.isBuilt(), t.lastRefreshMillis());
    }

    /**
     * The state of this node's maintained trees.
     *
     * @param ready             every leaf was computed since start; before, rounds wait for it
     * @param lastRefreshMillis when the trees were last brought up to date (epoch ms), 0 never
     */
    public record TreeState(boolean ready, long lastRefreshMillis) {
    }

    /**
     * The tree of the records in {@code scope}. Completing or cancelling the returned future early
     * stops a scan in progress.
     */
    public CompletableFuture<MerkleTree> buildTree(RepairScope scope, int fanoutBits, int depth) {
        CompletableFuture<MerkleTree> result = new CompletableFuture<>();
        onReader(() -> {
            MaintainedTrees t = trees;
            return t != null && t.serves(scope, fanoutBits, depth) ? t.treeFor(scope) : scanTree(scope, fanoutBits, depth, result);
        }).whenComplete((tree, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
            } else {
                result.complete(tree);
            }
        });
        return result;
    }

    /** A tree of another shape or scope than the maintained ones: one pass over the index. */
    private MerkleTree scanTree(RepairScope scope, int fanoutBits, int depth, CompletableFuture<?> wanted) {
        MerkleTree tree = new MerkleTree(fanoutBits, depth);
        int shift = BucketIndex.BUCKET_BITS - fanoutBits * depth;
        int[] scanned = {0};
        storage.store().forEachIndexed(new int[] {0, 1 << BucketIndex.BUCKET_BITS}, null, e -> {
            if (scope.covers(e.key())) {
                tree.addHash(e.bucket() >>> shift, e.recordHash());
            }
            if (++scanned[0] == PACE_CHUNK) {
                indexPace.acquire(scanned[0]);
                scanned[0] = 0;
            }
            return !wanted.isDone();
        });
        return tree.seal();
    }

    /**
     * The records in {@code scope} whose key falls in one of {@code buckets} of a tree of the given
     * shape, bucket by bucket (not in key order), as a stream of non-empty batches (an empty batch
     * is the end). Records read are paced.
     *
     * <p>A record newer than {@code roundStart} (a hybrid-clock timestamp) is not sent: it may only
     * be a write still in flight, which the write path itself delivers, and a real difference is
     * still there next round. The other records of its bucket are sent all the same (at worst
     * redundantly): a bucket holding a key rewritten during every round would otherwise never get
     * its other keys repaired, and a completed round would not vouch for every record up to its
     * start, as {@link RepairLedger} needs.
     */
    public EntryStream recordsOf(RepairScope scope, int fanoutBits, int depth, BitSet buckets, long roundStart) {
        return new BucketRecords(scope, BucketIndex.BUCKET_BITS - fanoutBits * depth, (BitSet) buckets.clone(),
                roundStart);
    }

    /**
     * A hybrid-clock timestamp at least as new as every record stored so far (the local replica's
     * clock moves past each record it writes): a round's start, for {@link #recordsOf}.
     */
    public long now() {
        return local.hlc().now();
    }

    /**
     * Writes received records, each unless this node holds a newer version; completes with how many
     * changed the store, or fails (e.g. with {@code StorageOverloadedException}) if any write did.
     */
    public CompletableFuture<Integer> apply(List<Entry> entries) {
        List<CompletableFuture<Boolean>> writes = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            writes.add(local.write(e.key(), e.record()));
        }
        return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
                .thenApply(v -> (int) writes.stream().filter(CompletableFuture::join).count());
    }

    /** Stops the reader, waiting a little for a read in progress; what is queued fails. Idempotent. */
    @Override
    public void close() throws InterruptedException {
        reader.shutdownNow();
        reader.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** How reading a leaf of a {@link BucketRecords} stopped. */
    private enum LeafRead { COMPLETE, FULL }

    private <T> CompletableFuture<T> onReader(Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            reader.execute(() -> {
                try {
                    result.complete(work.call());
                } catch (Exception e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new RepairException(Reason.CANCELLED, "anti-entropy is shutting down"));
        }
        return result;
    }

    /**
     * The records of chosen buckets, found through the index and read a batch at a time on the
     * reader, without those newer than the round's start (see {@link #recordsOf}). A bucket goes
     * whole into one batch when it fits in one.
     */
    private final class BucketRecords implements EntryStream {
        private final RepairScope scope;
        private final int shift;
        private final BitSet leaves;
        private final long roundStart;
        private final List<Entry> leafRecords = new ArrayList<>();
        private long leafBytes;
        private int leaf;
        private int resumeBucket;
        private byte[] resumeAfter;
        private volatile boolean closed;

        BucketRecords(RepairScope scope, int shift, BitSet leaves, long roundStart) {
            this.scope = scope;
            this.shift = shift;
            this.leaves = leaves;
            this.roundStart = roundStart;
            this.leaf = leaves.nextSetBit(0);
            this.resumeBucket = leaf < 0 ? 0 : leaf << shift;
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            return onReader(this::readBatch);
        }

        private List<Entry> readBatch() {
            List<Entry> batch = new ArrayList<>();
            long batchBytes = 0;
            while (!closed && leaf >= 0) {
                LeafRead read = readLeaf(batch.size(), batchBytes);
                if (read == LeafRead.COMPLETE || batch.isEmpty()) {
                    // A leaf that fills a batch on its own goes out in parts (see recordsOf).
                    batch.addAll(leafRecords);
                    batchBytes += leafBytes;
                    if (read == LeafRead.COMPLETE) {
                        nextLeaf();
                    }
                } else {
                    restartLeaf(); // read again from its start, into the next batch
                }
                leafRecords.clear();
                leafBytes = 0;
                if (read == LeafRead.FULL || batch.size() >= SCAN_ENTRIES || batchBytes >= SCAN_BYTES) {
                    break;
                }
            }
            return batch;
        }

        /**
         * Reads the current leaf from where it was left into {@link #leafRecords}, but for records
         * newer than the round's start, until its end or a full batch (counting {@code inBatch}
         * entries of {@code batchBytes} already taken).
         */
        private LeafRead readLeaf(int inBatch, long batchBytes) {
            LeafRead[] outcome = {LeafRead.COMPLETE};
            storage.store().forEachIndexed(new int[] {resumeBucket, (leaf + 1) << shift}, resumeAfter, e -> {
                resumeBucket = e.bucket();
                resumeAfter = e.key();
                if (scope.covers(e.key())) {
                    var record = storage.store().get(e.key());
                    if (record != null) {
                        recordPace.acquire();
                        if (record.timestamp() > roundStart) {
                            return !closed; // maybe a write in flight: the write path delivers it
                        }
                        int size = e.key().length + record.value().length;
                        bytePace.acquire(Math.max(1, size));
                        leafRecords.add(new Entry(e.key(), record));
                        leafBytes += size;
                    }
                }
                if (closed || inBatch + leafRecords.size() >= SCAN_ENTRIES || batchBytes + leafBytes >= SCAN_BYTES) {
                    outcome[0] = LeafRead.FULL;
                    return false;
                }
                return true;
            });
            return outcome[0];
        }

        private void nextLeaf() {
            leaf = leaves.nextSetBit(leaf + 1);
            restartLeaf();
        }

        private void restartLeaf() {
            resumeBucket = leaf < 0 ? 0 : leaf << shift;
            resumeAfter = null;
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
