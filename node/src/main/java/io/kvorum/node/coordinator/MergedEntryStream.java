package io.kvorum.node.coordinator;

import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.node.util.Failures;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * The k-way merge of a range over several nodes (docs/http-api.md (ranges)): one raw {@link EntryStream} per node,
 * each in ascending unsigned byte order of keys, merged into one raw stream in that order with the
 * newest version ({@link Record#newest}) of each key. Tombstones and expired records are kept, so
 * that a newer tombstone hides an older value; the caller filters the dead ones out afterwards.
 *
 * <p>Only the versions of a key's replicas count: a node may hold a key it no longer replicates (it
 * keeps such records until {@code POST /v0/cleanup}, docs/operations.md#growing-and-shrinking-a-cluster, or it took a write with a {@code from}
 * beyond the replication factor), and once the replicas have purged the tombstone that deleted it,
 * that stale copy would be the only version left: a deleted key come back.
 *
 * <p>Memory: at most one batch per node plus the output batch being built. A batch is emitted when
 * it is full or when some node's batch is used up; that node's next batch is then requested by the
 * next {@link #next()}, so the consumer's pace is every node's pace.
 *
 * <p>Failures: the first {@link #next()} asks every node for its first batch. When
 * {@code maxFailuresBeforeFirst} or fewer fail, the merge goes on without them (their keys are
 * expected on other replicas); when more fail, it fails with {@link NotEnoughReplicasException}
 * (or {@link StorageOverloadedException} when no node answered and one refused for overload). A
 * node failing later fails the stream with {@link NotEnoughReplicasException}: the merge can no
 * longer tell which keys it is missing, so the answer must look truncated, not short.
 *
 * <p>Threading: follows the {@link EntryStream} contract. Continuations run on the threads that
 * complete the nodes' batches; the state is guarded by {@code this}, and neither a node's stream
 * nor a caller's future is called while holding it. {@link #close()} closes every node's stream,
 * including those with a batch in flight.
 */
final class MergedEntryStream implements EntryStream {

    /** One node's stream and its current batch. Guarded by the enclosing merge. */
    private static final class Source {
        final String nodeId;
        final EntryStream stream;
        List<Entry> batch = List.of();
        int position;
        List<Entry> received; // the batch of the refill in progress
        Throwable failure; // of the refill in progress

        Source(String nodeId, EntryStream stream) {
            this.nodeId = nodeId;
            this.stream = stream;
        }

        boolean hasHead() {
            return position < batch.size();
        }

        Entry head() {
            return batch.get(position);
        }
    }

    private final List<Source> all;
    private final Function<byte[], List<String>> replicasOf;
    private final List<Source> active; // neither exhausted nor dropped; guarded by this
    private final int maxFailuresBeforeFirst;
    private final int maxEntries;
    private final int maxBytes;
    private final LongConsumer timestampObserver;
    private boolean started; // guarded by this
    private boolean closed; // guarded by this

    /**
     * @param streams                one raw stream per node, by node id; not yet read
     * @param replicasOf             the ids of the nodes that replicate a key: only their versions count
     * @param maxFailuresBeforeFirst how many nodes may fail their first batch with the range still
     *                               served from the others (RF - 1)
     * @param maxEntries             the most entries in one output batch
     * @param maxBytes               an output batch ends once its keys and values reach this size
     * @param timestampObserver      sees the timestamp of every version the merge returns (the HLC
     *                               moves past timestamps read from other nodes)
     */
    MergedEntryStream(List<Named> streams, Function<byte[], List<String>> replicasOf, int maxFailuresBeforeFirst,
                      int maxEntries, int maxBytes, LongConsumer timestampObserver) {
        this.all = streams.stream().map(n -> new Source(n.nodeId(), n.stream())).toList();
        this.replicasOf = replicasOf;
        this.active = new ArrayList<>(all);
        this.maxFailuresBeforeFirst = maxFailuresBeforeFirst;
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
        this.timestampObserver = timestampObserver;
    }

    /** A node's stream. */
    record Named(String nodeId, EntryStream stream) {
    }

    @Override
    public CompletableFuture<List<Entry>> next() {
        List<Source> toRefill;
        boolean first;
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new CancellationException("range closed"));
            }
            first = !started;
            started = true;
            toRefill = active.stream().filter(s -> !s.hasHead()).toList();
            if (toRefill.isEmpty()) {
                return CompletableFuture.completedFuture(mergeBuffered());
            }
            toRefill.forEach(s -> s.batch = List.of()); // used up: let it go before the next one arrives
        }
        return refill(toRefill, first).thenApply(ignored -> {
            synchronized (this) {
                if (closed) {
                    throw new CancellationException("range closed");
                }
                return mergeBuffered();
            }
        });
    }

    /**
     * Asks each source for its next batch, in parallel, and completes once all answered. A source
     * that ends is dropped; one that fails is dropped too if this is the first batch and few enough
     * failed, and otherwise fails the whole merge.
     */
    private CompletableFuture<Void> refill(List<Source> sources, boolean first) {
        CompletableFuture<?>[] answers = new CompletableFuture<?>[sources.size()];
        for (int i = 0; i < sources.size(); i++) {
            Source s = sources.get(i);
            CompletableFuture<List<Entry>> next;
            try {
                next = s.stream.next();
            } catch (RuntimeException e) {
                next = CompletableFuture.failedFuture(e); // counts as that node failing
            }
            answers[i] = next.handle((batch, error) -> {
                synchronized (this) {
                    s.received = batch;
                    s.failure = error;
                }
                return null;
            });
        }
        return CompletableFuture.allOf(answers).thenRun(() -> {
            List<Source> failed = new ArrayList<>();
            RuntimeException failure = null;
            synchronized (this) {
                for (Source s : sources) {
                    if (s.failure != null) {
                        failed.add(s);
                        active.remove(s);
                    } else if (s.received.isEmpty()) {
                        active.remove(s); // ended
                    } else {
                        s.batch = s.received;
                        s.position = 0;
                    }
                    s.received = null;
                }
                if (!failed.isEmpty() && !closed && (!first || failed.size() > maxFailuresBeforeFirst)) {
                    failure = failure(failed, first);
                }
            }
            for (Source s : failed) {
                s.stream.close();
            }
            if (failure != null) {
                close();
                throw failure;
            }
        });
    }

    private RuntimeException failure(List<Source> failed, boolean first) {
        StringBuilder why = new StringBuilder();
        boolean overloaded = false;
        for (Source s : failed) {
            Throwable t = Failures.unwrap(s.failure);
            overloaded |= t instanceof OverloadedException;
            why.append(why.length() == 0 ? "" : "; ").append(s.nodeId).append(": ").append(t.getMessage());
        }
        if (!first) {
            return new NotEnoughReplicasException("a node failed in the middle of the range (" + why + ")");
        }
        if (overloaded && failed.size() == all.size()) {
            return new OverloadedException("nodes are overloaded (" + why + ")");
        }
        return new NotEnoughReplicasException(failed.size() + " of " + all.size() + " nodes did not answer the range, "
                + "at most " + maxFailuresBeforeFirst + " may be down (" + why + ")");
    }

    /**
     * Merges what is buffered: stops when the output batch is full, or when a source that has not
     * ended has used up its batch (its next key is unknown). Empty only when every source ended.
     */
    private List<Entry> mergeBuffered() {
        List<Entry> out = new ArrayList<>();
        int bytes = 0;
        while (out.size() < maxEntries && bytes < maxBytes && !active.isEmpty()) {
            byte[] min = null;
            for (Source s : active) {
                if (!s.hasHead()) {
                    return out;
                }
                if (min == null || Arrays.compareUnsigned(s.head().key(), min) < 0) {
                    min = s.head().key();
                }
            }
            List<String> replicas = replicasOf.apply(min);
            Record newest = null;
            for (Source s : active) {
                Entry head = s.head();
                if (Arrays.equals(head.key(), min)) {
                    if (replicas.contains(s.nodeId)) {
                        newest = Record.newest(newest, head.record());
                    }
                    s.position++;
                }
            }
            if (newest == null) {
                continue; // only stale copies, on nodes that do not replicate the key
            }
            timestampObserver.accept(newest.timestamp());
            out.add(new Entry(min, newest));
            bytes += min.length + newest.value().length;
        }
        return out;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            active.clear();
        }
        for (Source s : all) {
            s.stream.close();
        }
    }
}
