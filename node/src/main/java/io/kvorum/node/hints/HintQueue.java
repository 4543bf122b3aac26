package io.kvorum.node.hints;

import io.kvorum.node.coordinator.HintSink;
import io.kvorum.node.hints.HintStore.DropReason;
import io.kvorum.node.hints.HintStore.Hint;
import io.kvorum.node.hints.HintStore.Limits;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.BatchingWriter;
import io.kvorum.node.storage.StorageFailures;
import io.kvorum.node.time.Clock;
import io.kvorum.node.util.NodeThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.iq80.leveldb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue of changes in front of the {@link HintDatabase}, and the one writer thread
 * ({@code hint-writer}, a {@link BatchingWriter}) that owns every change of it: appends, deletes
 * and expiry, committed in batches of one LevelDB write each.
 *
 * <p>Bounds: the queue is bounded in entries ({@link Limits#queueCapacity}) and in bytes of hints
 * ({@link Limits#queueBytes}); a hint that does not fit is dropped at once. On the writer, a hint
 * that would take its peer past {@link Limits#maxBytesPerPeer} is dropped, and about once a second
 * of the {@link Clock} the hints older than {@link Limits#maxAge} are deleted and the drops logged.
 *
 * <p>Threading: {@link #hint}, {@link #delete} and {@link #flush} never block and run on any
 * thread. Futures complete on the writer thread.
 */
final class HintQueue implements BatchingWriter.Handler<HintQueue.Op> {

    /** The hint store's log: operators know its lines by that name ({@code docs/operations.md}). */
    private static final Logger log = LoggerFactory.getLogger(HintStore.class);
    private static final int MAX_BATCH = 256;
    private static final long HOUSEKEEPING_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAX_EXPIRED_PER_SWEEP = 10_000;
    private static final long MAX_EXPIRED_BYTES_PER_SWEEP = 64L << 20;
    private static final int EXPIRY_PAGE = 32;
    private static final long EXPIRY_PAGE_BYTES = 4L << 20;

    private final HintDatabase database;
    private final HintAccounting accounting;
    private final Limits limits;
    private final Clock clock;
    private final StorageFailures failures;
    private final BatchingWriter<Op> writer;
    private long nextSeq; // writer thread only, once started
    private long lastHousekeeping; // writer thread only, once started; Clock#nanoTime

    /**
     * A queue whose hints are numbered from {@code nextSeq} on; {@link #start} starts its writer.
     *
     * @param failures counts and logs the writes the hint database fails
     */
    HintQueue(HintDatabase database, HintAccounting accounting, Limits limits, Clock clock, long nextSeq,
              StorageFailures failures) {
        this.database = database;
        this.accounting = accounting;
        this.limits = limits;
        this.clock = clock;
        this.failures = failures;
        this.nextSeq = nextSeq;
        this.lastHousekeeping = clock.nanoTime();
        this.writer = new BatchingWriter<>(task -> NodeThreads.single("hint-writer", task), limits.queueCapacity(),
                MAX_BATCH, this);
    }

    void start() {
        writer.start();
    }

    /**
     * Queues a hint for writing; drops it (counted) when the queue is full or stopping. Never blocks.
     * The future completes once the hint is written, or dropped (see {@link HintSink#hint}).
     */
    CompletableFuture<Void> hint(String peer, byte[] key, Record record) {
        long size = key.length + record.value().length + 64L;
        if (writer.isStopping()) {
            accounting.dropped(peer, DropReason.SHUTTING_DOWN, 1);
            return HintSink.KEPT;
        }
        if (accounting.pendingBytes(peer) + key.length + record.value().length > limits.maxBytesPerPeer()) {
            // Certain to be dropped on the writer (the key and value alone do not fit): spare the queue
            // a copy of what may be a large value. The writer checks the exact size again.
            accounting.dropped(peer, DropReason.PEER_FULL, 1);
            return HintSink.KEPT;
        }
        if (!limits.disk().tryWrite(size)) {
            accounting.dropped(peer, DropReason.LOW_DISK, 1);
            return HintSink.KEPT;
        }
        if (!accounting.reserveQueued(size)) {
            accounting.dropped(peer, DropReason.QUEUE_FULL, 1);
            return HintSink.KEPT;
        }
        Op.Append append = new Op.Append(peer, key, record, clock.currentTimeMillis(), size, new CompletableFuture<>());
        BatchingWriter.Offer offer = writer.offer(append);
        if (offer != BatchingWriter.Offer.QUEUED) {
            accounting.releaseQueued(size);
            accounting.dropped(peer, offer == BatchingWriter.Offer.FULL ? DropReason.QUEUE_FULL
                    : DropReason.SHUTTING_DOWN, 1);
            return HintSink.KEPT;
        }
        return append.written();
    }

    /** See {@link HintStore#delete}. */
    CompletableFuture<Void> delete(List<Hint> hints) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (hints.isEmpty()) {
            done.complete(null);
        } else {
            submit(new Op.Delete(List.copyOf(hints), done));
        }
        return done;
    }

    /** See {@link HintStore#flush}. */
    CompletableFuture<Void> flush() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        submit(new Op.Delete(List.of(), done)); // deletes nothing, completes after what is ahead of it
        return done;
    }

    private void submit(Op op) {
        switch (writer.offer(op)) {
            case QUEUED -> { }
            case FULL -> op.fail("the hint write queue is full");
            case STOPPING -> op.fail("the hint store is closing");
        }
    }

    /** Stops taking changes and waits up to {@code wait} for the writer to write what is queued; see {@link BatchingWriter#stop}. */
    boolean stop(Duration wait) throws InterruptedException {
        return writer.stop(wait);
    }

    // ---- writer thread ----

    @Override
    public void commit(List<Op> ops) {
        for (Op op : ops) {
            if (op instanceof Op.Append a) {
                accounting.releaseQueued(a.size());
            }
        }
        List<Runnable> onCommit = new ArrayList<>();
        List<Op> committed = new ArrayList<>();
        Map<String, Long> bytesInBatch = new HashMap<>();
        try (WriteBatch batch = database.newBatch()) {
            for (Op op : ops) {
                if (op instanceof Op.Append a) {
                    byte[] k = HintCodec.key(a.peer(), nextSeq);
                    byte[] v = HintCodec.value(a.key(), a.record(), a.createdAtMillis());
                    long size = k.length + v.length;
                    long inBatch = bytesInBatch.getOrDefault(a.peer(), 0L);
                    if (accounting.pendingBytes(a.peer()) + inBatch + size > limits.maxBytesPerPeer()) {
                        accounting.dropped(a.peer(), DropReason.PEER_FULL, 1);
                        a.succeed(); // dropped: nothing more to wait for
                        continue;
                    }
                    nextSeq++;
                    bytesInBatch.put(a.peer(), inBatch + size);
                    batch.put(k, v);
                    onCommit.add(() -> accounting.stored(a.peer(), size));
                } else if (op instanceof Op.Delete d) {
                    for (Hint h : d.hints()) {
                        byte[] k = HintCodec.key(h.peer(), h.seq());
                        byte[] v = database.get(k);
                        if (v != null) {
                            batch.delete(k);
                            long size = k.length + v.length;
                            onCommit.add(() -> accounting.removed(h.peer(), size));
                        }
                    }
                }
                committed.add(op);
            }
            database.write(batch);
        } catch (IOException | RuntimeException e) {
            if (!(failures.failed(StorageFailures.Op.WRITE, ops.size(), e) instanceof StorageFailures.Reported)) {
                log.error("writing {} hint operations failed", ops.size(), e);
            }
            for (Op op : ops) {
                if (op instanceof Op.Append a) {
                    accounting.dropped(a.peer(), DropReason.WRITE_FAILED, 1);
                    a.succeed(); // dropped: nothing more to wait for
                } else {
                    op.fail("writing hints failed: " + e);
                }
            }
            return;
        }
        onCommit.forEach(Runnable::run);
        committed.forEach(Op::succeed);
    }

    @Override
    public void abandon(Op op) {
        if (op instanceof Op.Append a) {
            accounting.releaseQueued(a.size());
            accounting.dropped(a.peer(), DropReason.SHUTTING_DOWN, 1);
            a.succeed(); // dropped: nothing more to wait for
        } else {
            op.fail("the hint store is closing");
        }
    }

    /** Housekeeping, about once a second of the clock: expiry, and the drop log. */
    @Override
    public void tick() {
        long now = clock.nanoTime();
        if (now - lastHousekeeping >= HOUSEKEEPING_INTERVAL_NANOS) {
            lastHousekeeping = now;
            expireOld();
            accounting.logDrops(false, clock.nanoTime());
        }
    }

    @Override
    public void stopped() {
        accounting.logDrops(true, clock.nanoTime());
    }

    /**
     * Deletes hints older than the age bound, from the head of each peer's hints (arrival order,
     * which is creation order unless the wall clock went back). At most
     * {@link #MAX_EXPIRED_PER_SWEEP} hints or about {@link #MAX_EXPIRED_BYTES_PER_SWEEP} of keys and
     * values per sweep, so that the writer stays responsive and the heap holds few of them.
     */
    private void expireOld() {
        long oldestKept = clock.currentTimeMillis() - limits.maxAge().toMillis();
        for (String peer : accounting.pendingByPeer().keySet()) {
            List<Hint> expired = new ArrayList<>();
            long expiredBytes = 0;
            long after = 0;
            boolean more = true;
            while (more && expired.size() < MAX_EXPIRED_PER_SWEEP && expiredBytes < MAX_EXPIRED_BYTES_PER_SWEEP) {
                // The head alone first: usually it is young, and that is all there is to read (a page
                // of 32 hints of 4 MB values, every second, took a tenth of a loaded node's CPU).
                int pageSize = expired.isEmpty() ? 1 : EXPIRY_PAGE;
                List<Hint> page = database.read(peer, after, pageSize, EXPIRY_PAGE_BYTES);
                more = !page.isEmpty(); // a young hint below ends it too
                for (Hint h : page) {
                    if (h.createdAtMillis() >= oldestKept) {
                        more = false;
                        break;
                    }
                    expired.add(h);
                    expiredBytes += h.key().length + h.record().value().length;
                    after = h.seq();
                }
            }
            if (!expired.isEmpty()) {
                commit(List.of(new Op.Delete(expired, new CompletableFuture<>())));
                accounting.dropped(peer, DropReason.EXPIRED, expired.size());
            }
        }
    }

    /** Work for the writer thread. */
    sealed interface Op permits Op.Append, Op.Delete {

        default void succeed() {
        }

        default void fail(String why) {
        }

        /** @param written completes once the hint is written, or dropped */
        record Append(String peer, byte[] key, Record record, long createdAtMillis, long size,
                      CompletableFuture<Void> written) implements Op {
            @Override
            public void succeed() {
                written.complete(null);
            }
        }

        record Delete(List<Hint> hints, CompletableFuture<Void> done) implements Op {
            @Override
            public void succeed() {
                done.complete(null);
            }

            @Override
            public void fail(String why) {
                done.completeExceptionally(new IllegalStateException(why));
            }
        }
    }
}
