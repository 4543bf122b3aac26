package io.kvorum.node.storage;

import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every stored entry of a key range (tombstones and expired records included) from this node's
 * LevelDB, read on the storage read executor one batch at a time.
 *
 * <p>Each batch opens its own cursor, seeked just past the last key of the batch before, and closes
 * it before the batch is handed over: between batches the stream holds no LevelDB iterator, so a
 * reader as slow as it likes (a range's HTTP client, a peer's range scan) pins no snapshot, no
 * memtable and no table files, however many such readers there are. Each batch is consistent in
 * itself; a key written between two batches is seen by a later batch if it sorts after the keys
 * already returned. Every key comes at most once and in order either way (docs/http-api.md,
 * ranges: each live key with its newest value).
 */
public final class LocalEntryStream implements EntryStream {

    /** LevelDB iterators open right now for ranges, node-wide; tests use it to prove that none stays open. */
    private static final AtomicInteger OPEN_CURSORS = new AtomicInteger();
    /** Streams that have read a batch and have not ended, node-wide; tests use it to prove that ranges end. */
    private static final AtomicInteger OPEN_STREAMS = new AtomicInteger();
    /** Entries read by every range so far, node-wide; tests use it to prove read-ahead is bounded. */
    private static final AtomicLong ENTRIES_READ = new AtomicLong();

    private final LevelDbStore store;
    private final Executor executor;
    private final StorageFailures failures;
    private final byte[] end;
    private final int batchEntries;
    private final int batchBytes;
    private byte[] from; // guarded by this: where the next batch starts
    private boolean begun; // guarded by this
    private boolean closed; // guarded by this

    public LocalEntryStream(StorageService storage, byte[] start, byte[] end, int batchEntries, int batchBytes) {
        this.store = storage.store();
        this.executor = storage.readExecutor();
        this.failures = storage.failures();
        this.from = start;
        this.end = end;
        this.batchEntries = batchEntries;
        this.batchBytes = batchBytes;
    }

    public static int openCursors() {
        return OPEN_CURSORS.get();
    }

    public static int openStreams() {
        return OPEN_STREAMS.get();
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
        if (!begun) {
            begun = true;
            OPEN_STREAMS.incrementAndGet();
        }
        List<Entry> batch;
        try (LevelDbStore.Cursor cursor = store.cursor(from, end)) {
            OPEN_CURSORS.incrementAndGet();
            try {
                batch = cursor.next(batchEntries, batchBytes);
            } finally {
                OPEN_CURSORS.decrementAndGet();
            }
        }
        ENTRIES_READ.addAndGet(batch.size());
        if (batch.isEmpty()) {
            close();
        } else {
            from = justAfter(batch.get(batch.size() - 1).key());
        }
        return batch;
    }

    /** The first key after {@code key} in unsigned byte order: {@code key} and a zero byte. */
    private static byte[] justAfter(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    /** Ends the stream; if a batch is being read, right after it (the lock waits for it). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (begun) {
            OPEN_STREAMS.decrementAndGet();
        }
    }
}
