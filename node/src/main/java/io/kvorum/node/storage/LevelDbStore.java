package io.kvorum.node.storage;

import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Range;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's records in one LevelDB database: key bytes to {@link RecordCodec}-encoded records.
 *
 * <p>Blocking, and not synchronized for writers: {@link StorageService} calls {@link #apply} from
 * its single writer thread only, which is what makes each compare-then-write atomic. Reads and
 * iterators may run on any thread.
 *
 * <p>Durability: every batch goes to LevelDB's write-ahead log before {@link #apply} returns, so
 * it survives the death of the process; with {@code fsync} the log is also fsynced, so it
 * survives power loss.
 *
 * <p>Closing: LevelDB frees the database (block cache, table cache) on close, so an iterator used
 * afterwards reads freed native memory. Callers must stop every reader first ({@code KvorumNode}
 * closes storage last for that reason); as a safety net, {@link #close} waits for reads in
 * progress, closes the cursors still open (logging that as an error, since it is a shutdown-order
 * bug), and every later read fails with a {@link StorageException} instead of touching the
 * database.
 */
public final class LevelDbStore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LevelDbStore.class);

    private final DB db;
    private final WriteOptions writeOptions;
    /** Held shared by every use of {@link #db}, exclusively by {@link #close}. */
    private final ReadWriteLock closeLock = new ReentrantReadWriteLock();
    private final Set<Cursor> openCursors = ConcurrentHashMap.newKeySet();
    private boolean closed; // guarded by closeLock
    private StoredTimestampCeiling newestStored; // set once by open(), then the writer thread's
    private long ceilingAtOpen; // set once by open()
    private final boolean indexed;
    private volatile IntConsumer changedBuckets = bucket -> { };
    private volatile StoredTombstones storedTombstones = (key, timestamp) -> { };

    private LevelDbStore(DB db, boolean fsync, boolean indexed) {
        this.db = db;
        this.writeOptions = new WriteOptions().sync(fsync);
        this.indexed = indexed;
    }

    /** Whether it keeps the {@link BucketIndex} that maintained anti-entropy trees read. */
    public boolean isIndexed() {
        return indexed;
    }

    /** Whether each write is fsynced before it returns. */
    public boolean fsync() {
        return writeOptions.sync();
    }

    /** Opens (creating if needed) the database in {@code dir}, with its {@link BucketIndex}. */
    public static LevelDbStore open(Path dir, boolean fsync, long cacheBytes) throws IOException {
        return open(dir, fsync, cacheBytes, true);
    }

    /**
     * Opens (creating if needed) the database in {@code dir}.
     *
     * @param indexed whether to keep the {@link BucketIndex} (anti-entropy's; a single-node
     *                cluster has no use for it and saves its cost on every write). A store opened
     *                without it loses its mark of completeness, so that the next indexed open
     *                builds the index again from the records.
     */
    public static LevelDbStore open(Path dir, boolean fsync, long cacheBytes, boolean indexed) throws IOException {
        LevelDbStore store = new LevelDbStore(LevelDbOpener.open(dir, cacheBytes, 16 << 20), fsync, indexed);
        try {
            if (!indexed) {
                BucketIndex.markIncomplete(store.db);
            } else if (!BucketIndex.isComplete(store.db)) {
                try (Cursor records = store.cursor(new byte[0], null)) {
                    BucketIndex.rebuild(store.db, () -> records.next(4096, 4 << 20));
                }
            }
            store.newestStored = StoredTimestampCeiling.open(store.db, dir, () -> {
                try (Cursor records = store.cursor(new byte[0], null)) {
                    return StoredTimestampCeiling.newest(() -> records.next(4096, 4 << 20));
                }
            });
            store.ceilingAtOpen = store.newestStored.newest();
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    /**
     * A timestamp (unsigned; 0 for an empty store) that no record the store held when it was opened
     * is above, whoever wrote it, and at most 100 ms above the newest of them
     * ({@link StoredTimestampCeiling}): a node starts its clock past it, so that with its wall clock
     * set back across a restart it still stamps new writes above the versions they replace.
     */
    public long timestampCeilingAtOpen() {
        return ceilingAtOpen;
    }

    /**
     * Calls {@code listener} with the {@link BucketIndex} bucket of every key a write changed,
     * after the write is in the store, on the writer thread; it must be quick and not block.
     */
    public void onChangedBuckets(IntConsumer listener) {
        this.changedBuckets = listener;
    }

    /** Told of each tombstone a write stored. */
    @FunctionalInterface
    public interface StoredTombstones {
        /** A tombstone of {@code key} stamped {@code timestamp} is in the store now. */
        void stored(byte[] key, long timestamp);
    }

    /**
     * Calls {@code listener} for every tombstone a write stores (a delete, a received one, an expired
     * value the purger turned into one), after it is in the store and after the
     * {@linkplain #onChangedBuckets changed buckets} are told, on the writer thread; it must be quick
     * and not block.
     */
    public void onStoredTombstones(StoredTombstones listener) {
        this.storedTombstones = listener;
    }

    /**
     * Calls {@code action} with the {@link BucketIndex} entries of buckets {@code from <= bucket < to}
     * for each pair of {@code bounds} (ascending {@code from, to} pairs), in bucket then key order,
     * starting after key {@code after} of the first range's first bucket (null: at its start); a
     * range ends early when {@code action} returns false. All from one snapshot taken at the call.
     */
    public void forEachIndexed(int[] bounds, byte[] after, Predicate<BucketIndex.IndexEntry> action) {
        withIterator(iterator -> {
            for (int i = 0; i + 1 < bounds.length; i += 2) {
                BucketIndex.forEach(iterator, bounds[i], bounds[i + 1], i == 0 ? after : null, action);
            }
        });
    }

    /** Runs {@code scan} over a fresh iterator (one snapshot), closed afterwards. */
    private void withIterator(Consumer<DBIterator> scan) {
        closeLock.readLock().lock();
        try {
            checkOpen("an index scan");
            try (DBIterator iterator = db.iterator()) {
                scan.accept(iterator);
            }
        } catch (IOException e) {
            throw new StorageException("closing an index iterator failed", e);
        } finally {
            closeLock.readLock().unlock();
        }
    }

    /** The stored record of a key, tombstones and expired records included; null if none. */
    public Record get(byte[] key) {
        if (BucketIndex.isReserved(key)) {
            return null;
        }
        byte[] bytes;
        closeLock.readLock().lock();
        try {
            checkOpen("a read");
            bytes = db.get(key);
        } finally {
            closeLock.readLock().unlock();
        }
        return bytes == null ? null : RecordCodec.decode(bytes);
    }

    /**
     * About how many bytes the store's tables take on disk (LevelDB's approximate size of the whole
     * key space: records and index, not what is still only in the write-ahead log); 0 once closed.
     * Cheap: LevelDB answers from its table metadata.
     */
    public long approximateBytes() {
        closeLock.readLock().lock();
        try {
            return closed ? 0 : db.getApproximateSizes(new Range(new byte[0], WHOLE_KEY_SPACE_END))[0];
        } finally {
            closeLock.readLock().unlock();
        }
    }

    /** Past every key: records are below 0xFF, and the index's keys start with 0xFF 0x00 or 0xFF 0x01. */
    private static final byte[] WHOLE_KEY_SPACE_END = {(byte) 0xFF, (byte) 0xFF};

    /** Call with {@link #closeLock} held. */
    private void checkOpen(String what) {
        if (closed) {
            throw new StorageException(what + " after close: the store is closed", null);
        }
    }

    /**
     * Applies mutations as one atomic, durable batch and returns, for each, whether it changed the
     * store. A {@link Mutation.Put} is kept only if its record is newer than the stored one (and
     * than an earlier put of the same key in this batch); a {@link Mutation.Purge} acts only if the
     * stored record is still exactly the one it expects. A put whose timestamp is above every
     * stored one ({@link StoredTimestampCeiling}) is kept without reading the key.
     */
    boolean[] apply(List<? extends Mutation> mutations) {
        boolean[] applied = new boolean[mutations.size()];
        int[] buckets = new int[mutations.size()];
        // Later mutations of the same key in this batch must see the earlier ones.
        Map<ByteKey, Record> pending = new HashMap<>();
        long batchNewest = 0;
        closeLock.readLock().lock();
        try (WriteBatch batch = db.createWriteBatch()) {
            checkOpen("a write");
            for (int i = 0; i < mutations.size(); i++) {
                Mutation m = mutations.get(i);
                ByteKey key = new ByteKey(m.key());
                if (BucketIndex.isReserved(m.key())) {
                    continue; // not a record's key (see BucketIndex); never stored
                }
                if (m instanceof Mutation.Put put) {
                    long timestamp = put.record().timestamp();
                    Record current = pending.containsKey(key) ? pending.get(key)
                            : newestStored.isAboveAllStored(timestamp) ? null : get(m.key());
                    if (put.record().isNewerThan(current)) {
                        batch.put(m.key(), RecordCodec.encode(put.record()));
                        buckets[i] = indexed ? BucketIndex.put(batch, m.key(), put.record()) : -1;
                        pending.put(key, put.record());
                        applied[i] = true;
                        if (Long.compareUnsigned(timestamp, batchNewest) > 0) {
                            batchNewest = timestamp;
                        }
                    }
                } else if (m instanceof Mutation.Purge purge) {
                    // A replacement keeps the expected record's timestamp: the bound does not move.
                    Record current = pending.containsKey(key) ? pending.get(key) : get(m.key());
                    if (current != null && current.equals(purge.expected())) {
                        if (purge.replacement() == null) {
                            batch.delete(m.key());
                        } else {
                            batch.put(m.key(), RecordCodec.encode(purge.replacement()));
                        }
                        buckets[i] = indexed ? BucketIndex.replace(batch, m.key(), purge.replacement()) : -1;
                        pending.put(key, purge.replacement());
                        applied[i] = true;
                    }
                }
            }
            newestStored.addTo(batch, batchNewest);
            boolean written = false;
            try {
                db.write(batch, writeOptions);
                written = true;
            } finally {
                newestStored.afterWrite(batchNewest, written);
            }
        } catch (IOException e) {
            throw new StorageException("writing a batch failed", e);
        } finally {
            closeLock.readLock().unlock();
        }
        IntConsumer listener = changedBuckets;
        for (int i = 0; i < applied.length; i++) {
            if (applied[i] && buckets[i] >= 0) {
                listener.accept(buckets[i]);
            }
        }
        StoredTombstones tombstones = storedTombstones;
        for (int i = 0; i < applied.length; i++) {
            Record stored = !applied[i] ? null : mutations.get(i) instanceof Mutation.Put put ? put.record()
                    : ((Mutation.Purge) mutations.get(i)).replacement();
            if (stored != null && stored.tombstone()) {
                tombstones.stored(mutations.get(i).key(), stored.timestamp());
            }
        }
        return applied;
    }

    /** Whether the store holds no record at all (tombstones count as records). */
    public boolean isEmpty() {
        try (Cursor c = cursor(new byte[] {0}, null)) {
            return c.next(1, Integer.MAX_VALUE).isEmpty();
        }
    }

    /**
     * A cursor over stored records with {@code start <= key < end} in ascending unsigned byte
     * order ({@code end == null}: to the last record; never into the {@link BucketIndex}). It
     * reads a consistent snapshot. It must be
     * closed, and used by one thread at a time.
     */
    public Cursor cursor(byte[] start, byte[] end) {
        closeLock.readLock().lock();
        try {
            checkOpen("a scan");
            DBIterator iterator = db.iterator();
            iterator.seek(start);
            if (end == null || Arrays.compareUnsigned(end, BucketIndex.RESERVED_PREFIX) > 0) {
                end = BucketIndex.RESERVED_PREFIX; // records only, never the index
            }
            Cursor cursor = new Cursor(iterator, end);
            openCursors.add(cursor);
            return cursor;
        } finally {
            closeLock.readLock().unlock();
        }
    }

    /**
     * Waits for reads and writes in progress, closes the cursors still open (an error: their
     * owners must have stopped before), and closes the database. Idempotent.
     */
    @Override
    public void close() throws IOException {
        closeLock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (!openCursors.isEmpty()) {
                log.error("closing storage with {} cursor(s) still open; they fail from now on (read after close)",
                        openCursors.size());
                for (Cursor c : openCursors) {
                    c.closeIterator();
                }
            }
            db.close();
        } finally {
            closeLock.writeLock().unlock();
        }
    }

    /** See {@link #cursor}. */
    public final class Cursor implements AutoCloseable {
        private final DBIterator iterator;
        private final byte[] end;
        private boolean closed;

        private Cursor(DBIterator iterator, byte[] end) {
            this.iterator = iterator;
            this.end = end;
        }

        /** Up to {@code maxEntries} next entries, stopping early past {@code maxBytes}; empty at the end. */
        public List<Entry> next(int maxEntries, int maxBytes) {
            closeLock.readLock().lock();
            try {
                if (LevelDbStore.this.closed) {
                    throw new StorageException("a cursor read after close: the store is closed", null);
                }
                return nextOpen(maxEntries, maxBytes);
            } finally {
                closeLock.readLock().unlock();
            }
        }

        private List<Entry> nextOpen(int maxEntries, int maxBytes) {
            List<Entry> out = new ArrayList<>(Math.min(maxEntries, 64));
            int bytes = 0;
            while (!closed && out.size() < maxEntries && bytes < maxBytes && iterator.hasNext()) {
                Map.Entry<byte[], byte[]> e = DbIterators.readOrEnd(iterator::peekNext);
                if (e == null) {
                    break;
                }
                byte[] key = e.getKey();
                if (end != null && Arrays.compareUnsigned(key, end) >= 0) {
                    break;
                }
                iterator.next();
                out.add(new Entry(key, RecordCodec.decode(e.getValue())));
                bytes += key.length + e.getValue().length;
            }
            return out;
        }

        @Override
        public void close() {
            closeLock.readLock().lock();
            try {
                closeIterator(); // after the store closed, close() closed it already
            } finally {
                closeLock.readLock().unlock();
            }
        }

        /** Call with {@link #closeLock} held. */
        private void closeIterator() {
            if (!closed) {
                closed = true;
                openCursors.remove(this);
                try {
                    iterator.close();
                } catch (IOException e) {
                    throw new StorageException("closing an iterator failed", e);
                }
            }
        }
    }
}
