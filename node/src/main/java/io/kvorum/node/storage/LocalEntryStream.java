package io.kvorum.node.storage;

import io.kvorum.node.model.EntryStream;
import io.kvorum.node.storage.LevelDbStore.Cursor;
import io.kvorum.node.model.Entry;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every stored entry of a key range (tombstones and expired records included) from this node's
 * LevelDB, read on the storage read executor one batch at a time. The cursor is opened lazily by
 * the first batch and closed at the end, on error, or by {@link #close()}.
 */
public final class LocalEntryStream implements EntryStream {

    /** Iterators open right now, node-wide; tests use it to prove that ranges release theirs. */
    private static final AtomicInteger OPEN_CURSORS = new AtomicInteger();
    /** Entries read by every range cursor so far, node-wide; tests use it to prove read-ahead is bounded. */
    private static final AtomicLong ENTRIES_READ = new AtomicLong();

    private final LevelDbStore store;
    private final Executor executor;
    private final StorageFailures failures;
    private final byte[] start;
    private final byte[] end;
    private final int batchEntries;
    private final int batchBytes;
    private Cursor cursor; // guarded by this
    private boolean closed; // guarded by this

    public LocalEntryStream(StorageService storage, byte[] start, byte[] end, int batchEntries, int batchBytes) {
        this.store = storage.store();
        this.executor = storage.readExecutor();
        this.failures = storage.failures();
        this.start = start;
        this.end = end;
        this.batchEntries = batchEntries;
        this.batchBytes = batchBytes;
    }

    public static int openCursors() {
        return OPEN_CURSORS.get();
    }

    public static long entriesRead() {
        return ENTRIES_READ.get();
    }

    @Override
    public CompletableFuture<List<Entry>> next() {
        CompletableFuture<List<Entry>> result = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    result.complete(readBatch());
                } catch (RuntimeException e) {
                    close();
                    result.completeExceptionally(failures.failed(StorageFailures.Op.READ, 1, e));
                }
            });
        } catch (RejectedExecutionException e) {
            close();
            result.completeExceptionally(new StorageOverloadedException("storage read queue is full"));
        }
        return result;
    }

    private synchronized List<Entry> readBatch() {
        if (closed) {
            return List.of();
        }
        if (cursor == null) {
            cursor = store.cursor(start, end);
            OPEN_CURSORS.incrementAndGet();
        }
        List<Entry> batch = cursor.next(batchEntries, batchBytes);
        ENTRIES_READ.addAndGet(batch.size());
        if (batch.isEmpty()) {
            close();
        }
        return batch;
    }

    /** Closes the cursor; if a batch is being read, right after it (the lock waits for it). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (cursor != null) {
            cursor.close();
            cursor = null;
            OPEN_CURSORS.decrementAndGet();
        }
    }
}
