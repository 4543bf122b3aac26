package io.kvorum.node.antientropy;

import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.antientropy.RepairException.Reason;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.LocalEntryStream;
import io.kvorum.node.storage.StorageService;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Predicate;

/**
 * This node's records as anti-entropy sees them: a Merkle tree built by one streaming scan, the
 * records of chosen buckets by another, and received records written through the normal
 * compare-then-write of the local {@link Replica} (last write wins; the node's clock moves past
 * their timestamps).
 *
 * <p>Memory: a scan holds one batch of {@value #SCAN_ENTRIES} entries or about
 * {@value #SCAN_BYTES} bytes at a time, whatever the size of the store.
 *
 * <p>Threading: cursors run on the storage read executor, one batch at a time, so scans share it
 * fairly with client reads; hashing and filtering run on {@code executor}, never on storage threads.
 */
public final class RepairStorage {

    static final int SCAN_ENTRIES = 1024;
    static final int SCAN_BYTES = 1 << 20;
    private static final byte[] FIRST_KEY = new byte[0];

    private final StorageService storage;
    private final Replica local;
    private final Executor executor;

    /**
     * @param local    this node's replica, which writes received records
     * @param executor where hashing and filtering run (the anti-entropy executor)
     */
    public RepairStorage(StorageService storage, Replica local, Executor executor) {
        this.storage = storage;
        this.local = local;
        this.executor = executor;
    }

    /**
     * Builds, in one scan, the tree of the records in {@code scope}. Completing or cancelling the
     * returned future early stops the scan and releases its cursor.
     */
    public CompletableFuture<MerkleTree> buildTree(RepairScope scope, int fanoutBits, int depth) {
        MerkleTree tree = new MerkleTree(fanoutBits, depth);
        CompletableFuture<MerkleTree> result = new CompletableFuture<>();
        addAll(scan(e -> scope.covers(e.key())), tree, result);
        return result;
    }

    private static void addAll(EntryStream records, MerkleTree tree, CompletableFuture<MerkleTree> result) {
        records.next().whenComplete((batch, error) -> {
            if (error != null || result.isDone() || batch.isEmpty()) {
                records.close();
                if (error != null) {
                    result.completeExceptionally(error);
                } else {
                    result.complete(tree.seal());
                }
                return;
            }
            try {
                for (Entry e : batch) {
                    tree.add(e.key(), e.record());
                }
            } catch (RuntimeException e) {
                records.close();
                result.completeExceptionally(e);
                return;
            }
            addAll(records, tree, result);
        });
    }

    /**
     * The records in {@code scope} whose key falls in one of {@code buckets} of a tree of the given
     * shape, in key order, as a stream of non-empty batches (an empty batch is the end).
     */
    public EntryStream recordsOf(RepairScope scope, int fanoutBits, int depth, BitSet buckets) {
        int leafBits = fanoutBits * depth;
        BitSet wanted = (BitSet) buckets.clone();
        return scan(e -> wanted.get(MerkleTree.bucketOf(e.key(), leafBits)) && scope.covers(e.key()));
    }

    /** Every stored entry that {@code keep} accepts, tombstones and expired records included. */
    EntryStream scan(Predicate<Entry> keep) {
        return new FilteredStream(new LocalEntryStream(storage, FIRST_KEY, null, SCAN_ENTRIES, SCAN_BYTES), keep);
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

    /** A stream that skips what a predicate rejects, filtering on the anti-entropy executor. */
    private final class FilteredStream implements EntryStream {
        private final EntryStream source;
        private final Predicate<Entry> keep;

        FilteredStream(EntryStream source, Predicate<Entry> keep) {
            this.source = source;
            this.keep = keep;
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            CompletableFuture<List<Entry>> out = new CompletableFuture<>();
            pull(out);
            return out;
        }

        /** Reads batches until one keeps something or the source ends; no future chain grows meanwhile. */
        private void pull(CompletableFuture<List<Entry>> out) {
            source.next().whenComplete((batch, error) -> {
                if (error != null) {
                    out.completeExceptionally(error);
                    return;
                }
                try {
                    executor.execute(() -> filter(batch, out));
                } catch (RejectedExecutionException e) {
                    source.close();
                    out.completeExceptionally(new RepairException(Reason.CANCELLED, "anti-entropy is shutting down"));
                }
            });
        }

        private void filter(List<Entry> batch, CompletableFuture<List<Entry>> out) {
            if (batch.isEmpty()) {
                out.complete(batch);
                return;
            }
            List<Entry> kept = new ArrayList<>();
            try {
                for (Entry e : batch) {
                    if (keep.test(e)) {
                        kept.add(e);
                    }
                }
            } catch (RuntimeException e) {
                source.close();
                out.completeExceptionally(e);
                return;
            }
            if (kept.isEmpty()) {
                pull(out);
            } else {
                out.complete(kept);
            }
        }

        @Override
        public void close() {
            source.close();
        }
    }
}
