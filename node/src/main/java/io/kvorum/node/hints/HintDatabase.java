package io.kvorum.node.hints;

import io.kvorum.node.hints.HintStore.Hint;
import io.kvorum.node.storage.LevelDbOpener;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;

/**
 * The hints on disk: one LevelDB database, opened by the storage layer, in {@link HintCodec}'s
 * layout.
 *
 * <p>Threading: {@link #get} and {@link #write} are the writer thread's (or run before it starts);
 * {@link #read} runs on any thread. Every call blocks on LevelDB.
 *
 * <p>Durability: a batch is in LevelDB's log when {@link #write} returns; with {@code fsync} the
 * log is fsynced.
 *
 * <p>Closing: {@link #close} waits for reads in progress, and every later read fails. The writer
 * must have stopped first: closing under it would free native memory it is using.
 */
final class HintDatabase implements AutoCloseable {

    private final DB db;
    private final WriteOptions writeOptions;
    /** Held shared by reads, exclusively by {@link #close}. */
    private final ReadWriteLock closeLock = new ReentrantReadWriteLock();
    private boolean closed; // guarded by closeLock

    private HintDatabase(DB db, boolean fsync) {
        this.db = db;
        this.writeOptions = new WriteOptions().sync(fsync);
    }

    /** Opens (creating if needed) the hints in {@code dir}. */
    static HintDatabase open(Path dir, boolean fsync) throws IOException {
        return new HintDatabase(LevelDbOpener.open(dir, 8L << 20, 4 << 20), fsync);
    }

    /**
     * Counts every stored hint into {@code accounting} and returns the largest sequence number
     * stored (0 if none), after which the sequence continues.
     */
    long recover(HintAccounting accounting) {
        long maxSeq = 0;
        try (DBIterator it = db.iterator()) {
            for (it.seekToFirst(); it.hasNext(); ) {
                Map.Entry<byte[], byte[]> e = it.next();
                byte[] k = e.getKey();
                maxSeq = Math.max(maxSeq, HintCodec.seqOf(k));
                accounting.stored(HintCodec.peerOf(k), k.length + e.getValue().length);
            }
        } catch (IOException e) {
            throw new IllegalStateException("closing an iterator failed", e);
        }
        return maxSeq;
    }

    /**
     * Up to {@code max} of the peer's stored hints with a sequence above {@code afterSeq}, in
     * arrival order, and no more once their stored values reach {@code maxBytes} (at least one,
     * however large): a page of 4 MB values costs a read, a copy and a decode of each.
     *
     * @throws IllegalStateException when the database is closed
     */
    List<Hint> read(String peer, long afterSeq, int max, long maxBytes) {
        byte[] prefix = HintCodec.peerPrefix(peer);
        List<Hint> out = new ArrayList<>(Math.min(max, 64));
        long bytes = 0;
        closeLock.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("the hint store is closed");
            }
            try (DBIterator it = db.iterator()) {
                it.seek(HintCodec.key(peer, afterSeq + 1));
                while (out.size() < max && it.hasNext()) {
                    Map.Entry<byte[], byte[]> e;
                    try {
                        e = it.next();
                    } catch (NoSuchElementException ignored) {
                        break;
                    }
                    if (!HintCodec.hasPrefix(e.getKey(), prefix)) {
                        break;
                    }
                    out.add(HintCodec.decode(peer, HintCodec.seqOf(e.getKey()), e.getValue()));
                    bytes += e.getValue().length;
                    if (bytes >= maxBytes) {
                        break;
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException("closing an iterator failed", e);
            }
        } finally {
            closeLock.readLock().unlock();
        }
        return out;
    }

    /** The stored value under a database key, or null. */
    byte[] get(byte[] key) {
        return db.get(key);
    }

    /** An empty batch for {@link #write}; the caller closes it. */
    WriteBatch newBatch() {
        return db.createWriteBatch();
    }

    /** Writes a batch atomically; it is in LevelDB's log on return. */
    void write(WriteBatch batch) {
        db.write(batch, writeOptions);
    }

    /** Waits for reads in progress and closes the database. Idempotent. */
    @Override
    public void close() throws IOException {
        closeLock.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                db.close();
            }
        } finally {
            closeLock.writeLock().unlock();
        }
    }
}
