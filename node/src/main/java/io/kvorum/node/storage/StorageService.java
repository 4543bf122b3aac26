package io.kvorum.node.storage;

import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.util.NodeThreads;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asynchronous, bounded access to the {@link LevelDbStore}: nothing here blocks the caller.
 *
 * <p>Threading: mutations commit one batch at a time, each batch one LevelDB write. A writer
 * thread ({@code storage-writer}, a {@link BatchingWriter}) drains the queue in batches, which is a
 * group commit: with {@code --fsync}, one fsync covers every write in the batch. Without
 * {@code --fsync}, a write that finds nothing queued or committing commits at once on the caller's
 * thread (an event loop), which spares it two thread hand-offs; under load writes queue as before.
 * Reads and range cursors run on a small pool ({@code storage-reader-N}); likewise, a read that
 * finds that pool with nothing to do is read on the caller's thread. A write or read there that
 * takes over 0.5 ms sends the others of its kind to the storage threads for a second
 * ({@link InlinePause}): a stalled database or a read from the disk must not hold an event loop.
 *
 * <p>Writes keep {@code --min-free-disk} free ({@link DiskSpace}): a client or replica write that
 * would go below it fails at once with {@link StorageOverloadedException}, counted in
 * {@code kvorum_storage_low_disk_rejected_total}. Purges are never refused: they are small, and
 * dropping expired records is how space comes back.
 *
 * <p>Both queues are bounded. When one is full the operation fails at once with
 * {@link StorageOverloadedException} and has had no effect; callers answer 503. Such refusals
 * count in {@code kvorum_storage_rejected_total}, and the queues' depths are reported as
 * {@code kvorum_storage_queue_depth}.
 *
 * <p>Reads and writes are also bounded in time, by a budget (the request timeout): one that waited
 * longer than it for its thread is dropped without effect ({@link StorageExpiredException}, counted
 * in {@code kvorum_storage_expired_total}), as whoever asked has given up; and while the oldest
 * of a queue has waited over half of it, new work for that queue is refused as for a full queue.
 * Large values are what makes this matter: a count of operations says little about how long they
 * take. Purges are not timed.
 *
 * <p>Futures complete on the storage threads or on the caller's; continuations must be short and non-blocking.
 */
public final class StorageService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StorageService.class);
    private static final int MAX_BATCH = 512;
    /** Most bytes of keys and values in one LevelDB write (a larger record is written alone). */
    private static final long MAX_COMMIT_BYTES = 4 << 20;
    /** What a record costs on disk beyond its key and value, about: its header and index entry. */
    private static final int RECORD_OVERHEAD_BYTES = 64;
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    private final LevelDbStore store;
    private final ThreadPoolExecutor readers;
    private final BatchingWriter<PendingMutation> writer;
    private final Counter rejected;
    private final DiskSpace disk;
    private final Counter lowDiskRejected;
    private final StorageFailures failures;
    /** Whether a write may commit on its caller's thread when the writer is idle: not when each commit fsyncs. */
    private final boolean commitInline;
    /** How long a read or a client or replica write may wait in its queue; 0: no limit. */
    private final long budgetNanos;
    private final LongSupplier nanoTime;
    private final Counter expiredReads;
    private final Counter expiredWrites;
    private final Counter inlineReadCount;
    private final Counter inlineWriteCount;
    /**
     * The first write of the drained batch the writer has not yet committed, or null: it has
     * waited longer than anything still queued. Written by the committing thread, read by writers.
     */
    private volatile PendingMutation oldestInHand;
    /**
     * Work given to the readers and not finished (reads and range cursors, queued or running),
     * plus the one read in progress on a caller's thread, if any.
     */
    private final AtomicInteger readerWork = new AtomicInteger();
    private final InlinePause inlineReads = new InlinePause();
    private final Executor readExecutor = this::executeOnReaders;

    /** Storage whose meters are its own ({@link NodeMetrics#unregistered}). */
    public StorageService(LevelDbStore store, int readerThreads, int queueCapacity) {
        this(store, readerThreads, queueCapacity, NodeMetrics.unregistered());
    }

    /** @param metrics where refusals are counted and the queues' depths reported */
    public StorageService(LevelDbStore store, int readerThreads, int queueCapacity, NodeMetrics metrics) {
        this(store, readerThreads, queueCapacity, DiskSpace.UNCHECKED, metrics);
    }

    /** @param disk what writes must leave free on the data directory's file system */
    public StorageService(LevelDbStore store, int readerThreads, int queueCapacity, DiskSpace disk, NodeMetrics metrics) {
        this(store, readerThreads, queueCapacity, disk, metrics, Duration.ZERO, System::nanoTime);
    }

    /**
     * @param budget   how long a read or a {@link #write} may wait for its storage thread (the request
     *                 timeout: after it, nobody waits for the answer any more); {@link Duration#ZERO}
     *                 for no limit
     * @param nanoTime the monotonic clock they are timed with
     */
    public StorageService(LevelDbStore store, int readerThreads, int queueCapacity, DiskSpace disk, NodeMetrics metrics,
                          Duration budget, LongSupplier nanoTime) {
        this.store = store;
        this.budgetNanos = budget.toNanos();
        this.nanoTime = nanoTime;
        this.expiredReads = metrics.storageExpired(NodeMetrics.StorageQueue.READ);
        this.expiredWrites = metrics.storageExpired(NodeMetrics.StorageQueue.WRITE);
        this.inlineReadCount = metrics.storageInline(NodeMetrics.StorageQueue.READ);
        this.inlineWriteCount = metrics.storageInline(NodeMetrics.StorageQueue.WRITE);
        this.rejected = metrics.storageRejected();
        this.disk = disk;
        this.lowDiskRejected = metrics.storageLowDiskRejected();
        this.failures = new StorageFailures("storage", metrics.storageErrors("records", "read"),
                metrics.storageErrors("records", "write"));
        this.commitInline = !store.fsync();
        this.readers = NodeThreads.bounded("storage-reader", readerThreads, queueCapacity);
        this.writer = new BatchingWriter<>(task -> NodeThreads.single("storage-writer", task), queueCapacity,
                MAX_BATCH, new BatchingWriter.Handler<>() {
                    @Override
                    public void commit(List<PendingMutation> batch) {
                        StorageService.this.commit(batch);
                    }

                    @Override
                    public void abandon(PendingMutation pending) {
                        pending.done.completeExceptionally(new StorageOverloadedException("storage is shutting down"));
                    }
                });
        this.writer.start();
        metrics.bindStorageQueue(NodeMetrics.StorageQueue.WRITE, writer::queued);
        metrics.bindStorageQueue(NodeMetrics.StorageQueue.READ, () -> readers.getQueue().size());
        metrics.bindStorageBytes(store::approximateBytes);
    }

    /**
     * The stored record of a key (tombstones and expired records included), or null. Fails at once
     * with {@link StorageOverloadedException} when the read queue is full or its oldest read has
     * waited over half of the budget, and with {@link StorageExpiredException}, unread, when the
     * read itself waited longer than the budget. A read that finds the readers with nothing to do
     * is read on this thread, and its future is complete when this returns.
     */
    public CompletableFuture<Record> read(byte[] key) {
        long now = nanoTime.getAsLong();
        if (!inlineReads.paused(now) && !readers.isShutdown() && readerWork.compareAndSet(0, 1)) {
            return readInline(key, now);
        }
        QueuedRead read = new QueuedRead(key, now);
        String refusal = readRefusal(read.queuedAt);
        if (refusal != null) {
            rejected.increment();
            read.result.completeExceptionally(new StorageOverloadedException(refusal));
            return read.result;
        }
        try {
            executeOnReaders(read);
        } catch (RejectedExecutionException e) {
            rejected.increment();
            read.result.completeExceptionally(new StorageOverloadedException("storage read queue is full"));
        }
        return read.result;
    }

    /** A read on the caller's thread, which holds {@link #readerWork}'s one unit until it ends. */
    private CompletableFuture<Record> readInline(byte[] key, long start) {
        try {
            Record record = store.get(key);
            inlineReads.ran(start, nanoTime.getAsLong() - start);
            inlineReadCount.increment();
            return CompletableFuture.completedFuture(record);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(failures.failed(StorageFailures.Op.READ, 1, e));
        } finally {
            readerWork.decrementAndGet();
        }
    }

    /** Runs {@code task} on a reader, counted in {@link #readerWork} until it ends; throws when the queue is full. */
    private void executeOnReaders(Runnable task) {
        readerWork.incrementAndGet();
        try {
            readers.execute(new ReaderTask(task));
        } catch (RejectedExecutionException e) {
            readerWork.decrementAndGet();
            throw e;
        }
    }

    /** A task given to the readers, counted in {@link #readerWork} until it ends. */
    private final class ReaderTask implements Runnable {
        final Runnable task;

        ReaderTask(Runnable task) {
            this.task = task;
        }

        @Override
        public void run() {
            try {
                task.run();
            } finally {
                readerWork.decrementAndGet();
            }
        }
    }

    /**
     * Why a read arriving at {@code now} is refused, or null: the oldest read in the queue has
     * waited over half of the budget, so a read queued behind it would likely wait out the rest.
     * Refusing it at once (503) keeps the reads already queued within their budget, where serving
     * every arrival would make all of them late.
     */
    private String readRefusal(long now) {
        return readers.getQueue().peek() instanceof ReaderTask queued && queued.task instanceof QueuedRead oldest
                ? ageRefusal("reads", now - oldest.queuedAt) : null;
    }

    /** Why work is refused when the oldest of its queue has waited {@code waited}, or null. */
    private String ageRefusal(String what, long waited) {
        if (budgetNanos == 0 || waited <= budgetNanos / 2) {
            return null;
        }
        return "storage " + what + " are waiting " + TimeUnit.NANOSECONDS.toMillis(waited)
                + " ms, over half of --request-timeout " + TimeUnit.NANOSECONDS.toMillis(budgetNanos) + " ms";
    }

    /** One read in the readers' queue, with when it was queued. */
    private final class QueuedRead implements Runnable {
        final byte[] key;
        final long queuedAt;
        final CompletableFuture<Record> result = new CompletableFuture<>();

        QueuedRead(byte[] key, long queuedAt) {
            this.key = key;
            this.queuedAt = queuedAt;
        }

        @Override
        public void run() {
            long waited = nanoTime.getAsLong() - queuedAt;
            if (budgetNanos != 0 && waited > budgetNanos) {
                // Whoever asked has stopped waiting (the request timeout is the same on every node).
                expiredReads.increment();
                result.completeExceptionally(StorageExpiredException.read(TimeUnit.NANOSECONDS.toMillis(waited)));
                return;
            }
            try {
                result.complete(store.get(key));
            } catch (RuntimeException e) {
                result.completeExceptionally(failures.failed(StorageFailures.Op.READ, 1, e));
            }
        }
    }

    /**
     * Stores {@code record} unless a newer version is stored; completes with whether it was stored.
     * Fails with {@link StorageOverloadedException}, without effect, when the queue is full, its
     * oldest write has waited over half of the budget, or the disk is at its reserve; and with
     * {@link StorageExpiredException}, without effect, when the write itself waited longer than the
     * budget.
     */
    public CompletableFuture<Boolean> write(byte[] key, Record record) {
        long now = nanoTime.getAsLong();
        PendingMutation oldest = oldestInHand;
        if (oldest == null) {
            oldest = writer.oldestQueued();
        }
        String refusal = oldest != null ? ageRefusal("writes", now - oldest.queuedAt()) : null;
        if (refusal != null) {
            rejected.increment();
            return CompletableFuture.failedFuture(new StorageOverloadedException(refusal));
        }
        if (!disk.tryWrite(key.length + record.value().length + RECORD_OVERHEAD_BYTES)) {
            lowDiskRejected.increment();
            return CompletableFuture.failedFuture(new StorageOverloadedException(disk.refusal()));
        }
        return submit(new PendingMutation(new Mutation.Put(key, record), new CompletableFuture<>(), now));
    }

    /**
     * Replaces {@code expected} with {@code replacement} (null: drops the key) if {@code expected} is
     * still what is stored; see {@link Mutation.Purge}. For the expiry purge and cleanup.
     */
    public CompletableFuture<Boolean> purge(byte[] key, Record expected, Record replacement) {
        return submit(new PendingMutation(new Mutation.Purge(key, expected, replacement), new CompletableFuture<>(),
                nanoTime.getAsLong()));
    }

    private CompletableFuture<Boolean> submit(PendingMutation pending) {
        switch (commitInline ? writer.offerOrCommit(pending) : writer.offer(pending)) {
            case QUEUED -> { }
            case COMMITTED -> inlineWriteCount.increment();
            case FULL -> {
                rejected.increment();
                pending.done.completeExceptionally(new StorageOverloadedException("storage write queue is full"));
            }
            case STOPPING -> pending.done.completeExceptionally(new StorageOverloadedException("storage is shutting down"));
        }
        return pending.done;
    }

    /**
     * The executor range cursors run on: the readers, bounded, so {@code execute} may throw
     * {@link RejectedExecutionException}.
     */
    public Executor readExecutor() {
        return readExecutor;
    }

    public LevelDbStore store() {
        return store;
    }

    /** The reads and writes the store failed, counted and logged. */
    public StorageFailures failures() {
        return failures;
    }

    /** What writes leave free on the data directory's file system. */
    public DiskSpace disk() {
        return disk;
    }

    /**
     * Commits what the writer drained, in parts of at most {@link #MAX_COMMIT_BYTES} of keys and values, so
     * that a batch of large values is not one LevelDB write that holds every one of them until the
     * last is in; before each part, the writes that have waited too long are dropped.
     */
    private void commit(List<PendingMutation> drained) {
        try {
            for (int from = 0, to; from < drained.size(); from = to) {
                long bytes = drained.get(from).bytes();
                for (to = from + 1; to < drained.size() && bytes + drained.get(to).bytes() <= MAX_COMMIT_BYTES; to++) {
                    bytes += drained.get(to).bytes();
                }
                oldestInHand = drained.get(from);
                commitPart(withoutExpired(drained.subList(from, to)), to < drained.size() ? drained.get(to) : null);
            }
        } finally {
            oldestInHand = null;
        }
    }

    /**
     * Applies {@code batch}, then answers its callers. {@code nextInHand}, the first write of the
     * drained batch's next part (null: none), becomes the oldest in hand before anyone is answered:
     * a caller woken by its answer, or running in its callback on this thread, must not have its
     * next write refused for the age of a write already committed.
     */
    private void commitPart(List<PendingMutation> batch, PendingMutation nextInHand) {
        if (batch.isEmpty()) {
            oldestInHand = nextInHand;
            return;
        }
        boolean[] applied;
        try {
            applied = store.apply(batch.stream().map(PendingMutation::mutation).toList());
        } catch (RuntimeException e) {
            RuntimeException reported = failures.failed(StorageFailures.Op.WRITE, batch.size(), e);
            if (!(reported instanceof StorageFailures.Reported)) {
                log.error("storage write of {} mutations failed", batch.size(), e);
            }
            oldestInHand = nextInHand;
            batch.forEach(p -> p.done.completeExceptionally(reported));
            return;
        }
        oldestInHand = nextInHand;
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).done.complete(applied[i]);
        }
    }

    /**
     * {@code queued} less the timed writes that waited past the budget, which fail here with
     * {@link StorageExpiredException} and are never applied: a write that has not been answered
     * in time may have no effect, and dropping it keeps the writer on writes still awaited.
     */
    private List<PendingMutation> withoutExpired(List<PendingMutation> queued) {
        if (budgetNanos == 0) {
            return queued;
        }
        long now = nanoTime.getAsLong();
        List<PendingMutation> live = null;
        for (int i = 0; i < queued.size(); i++) {
            PendingMutation p = queued.get(i);
            long waited = now - p.queuedAt();
            boolean expired = p.timed() && waited > budgetNanos;
            if (expired && live == null) {
                live = new ArrayList<>(queued.subList(0, i));
            }
            if (expired) {
                expiredWrites.increment();
                p.done().completeExceptionally(StorageExpiredException.write(TimeUnit.NANOSECONDS.toMillis(waited)));
            } else if (live != null) {
                live.add(p);
            }
        }
        return live == null ? queued : live;
    }

    /**
     * Stops taking work, finishes what is queued, and closes the database. Queued reads and writes
     * complete before the store closes. Callers must have stopped every other reader of
     * {@link #store()} (cursors) first.
     *
     * <p>If the writer or a reader is still running after {@link #CLOSE_WAIT} (a stuck disk), the
     * database is left open, with an error logged: closing it under a running thread would free
     * the native memory that thread is using, which can crash the JVM, while leaving it open costs
     * nothing that the process exit does not reclaim, and LevelDB's log keeps every acknowledged
     * write either way.
     */
    @Override
    public void close() throws Exception {
        boolean writerDone = writer.stop(CLOSE_WAIT);
        readers.shutdown();
        boolean readersDone = readers.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        if (!writerDone || !readersDone) {
            log.error("storage {} still busy after {} ms; leaving the database open rather than closing it under it",
                    !writerDone ? "writer" : "readers", CLOSE_WAIT.toMillis());
            return;
        }
        store.close();
    }

    /** @param queuedAt {@link #nanoTime} when it was submitted */
    private record PendingMutation(Mutation mutation, CompletableFuture<Boolean> done, long queuedAt) {
        /** Whether it may expire: a client's or a peer's write, waited for within the request timeout; purges are not. */
        boolean timed() {
            return mutation instanceof Mutation.Put;
        }

        long bytes() {
            if (mutation instanceof Mutation.Put put) {
                return put.key().length + put.record().value().length;
            }
            Mutation.Purge purge = (Mutation.Purge) mutation;
            return purge.key().length + (purge.replacement() == null ? 0 : purge.replacement().value().length);
        }
    }
}
