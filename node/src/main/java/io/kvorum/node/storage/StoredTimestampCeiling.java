package io.kvorum.node.storage;

import io.kvorum.node.model.Entry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ceiling over the timestamp of every record in the store, kept in the store itself so that it
 * survives a crash exactly as the records do.
 *
 * <p>Two uses. The writer: {@link LevelDbStore#apply} keeps a put only if it is newer than the
 * stored version, and reading that version was most of the writer thread's work; but a coordinator
 * stamps writes with its hybrid logical clock, which runs ahead of every timestamp it has seen, so
 * almost every put carries a timestamp above everything stored, and for those the read can only
 * say "older". The clock: a node restarted with its wall clock set back must still stamp its new
 * writes above what it stored, or they would be acknowledged and lose to the versions they replace.
 *
 * <p>Contract (timestamps compare unsigned, as {@link io.kvorum.node.model.Record#compareVersions}
 * does): no stored record has a timestamp above {@link #newest()}. In memory that bound is exact
 * for what was written since opening. In the store it is kept under the reserved key
 * {@code 0xFF 0x02} (see {@link BucketIndex}) and is at most {@link #HEADROOM} (100 ms of clock)
 * above the newest timestamp written: a batch that passes it also raises it to its own newest
 * timestamp plus the headroom. So under load it is rewritten about ten times a second, not with
 * every batch, and a node restarted (which takes far longer than the headroom) finds its wall clock
 * past it unless the clock went back. Being in the batch, it is atomic with the records: after a
 * crash LevelDB's log recovers both. A store without that key (from an older version, or after
 * {@link StoreRepair}, which may have set aside the key's latest version but kept records it
 * covered) is scanned once when opened.
 *
 * <p>Threading: the writer thread only, like {@link LevelDbStore#apply}.
 */
final class StoredTimestampCeiling {

    private static final Logger log = LoggerFactory.getLogger(StoredTimestampCeiling.class);

    static final byte[] KEY = {(byte) 0xFF, 0x02};
    /** 100 ms of physical clock in the HLC encoding (48 bits of milliseconds, 16 of counter). */
    static final long HEADROOM = 100L << 16;
    /** The file in which versions before the key kept the ceiling (with a minute's headroom); removed on open. */
    static final String LEGACY_FILE_NAME = "KVORUM-TIMESTAMP-BOUND";

    private long newest;
    /** The ceiling under {@link #KEY}, as far as this knows: never above what the store holds. */
    private long kept;
    /** The ceiling {@link #addTo} put in the batch being written; 0 for none. */
    private long pending;

    private StoredTimestampCeiling(long newest) {
        this.newest = newest;
        this.kept = newest;
    }

    /**
     * Reads the ceiling kept in the store {@code db} in {@code dir}, or, when there is none readable,
     * computes it with {@code scanNewest} (the largest stored timestamp, 0 when the store is empty)
     * and keeps it.
     */
    static StoredTimestampCeiling open(DB db, Path dir, LongSupplier scanNewest) throws IOException {
        byte[] kept = db.get(KEY);
        StoredTimestampCeiling ceiling;
        if (kept != null && kept.length == Long.BYTES) {
            ceiling = new StoredTimestampCeiling(ByteBuffer.wrap(kept).getLong());
        } else {
            if (kept != null) {
                log.warn("the timestamp ceiling kept in {} is unreadable; scanning the store for it instead", dir);
            }
            ceiling = new StoredTimestampCeiling(scanNewest.getAsLong());
            db.put(KEY, encode(ceiling.newest));
        }
        Files.deleteIfExists(dir.resolve(LEGACY_FILE_NAME));
        return ceiling;
    }

    /** Removes the kept ceiling from {@code db}, so that the next open scans the store for it. */
    static void forget(DB db) {
        db.delete(KEY);
    }

    /** The largest timestamp (unsigned) of the records {@code batches} gives (empty at the end); 0 for none. */
    static long newest(Supplier<List<Entry>> batches) {
        long newest = 0;
        for (List<Entry> batch = batches.get(); !batch.isEmpty(); batch = batches.get()) {
            for (Entry e : batch) {
                if (Long.compareUnsigned(e.record().timestamp(), newest) > 0) {
                    newest = e.record().timestamp();
                }
            }
        }
        return newest;
    }

    /** No stored record's timestamp is above this (unsigned); 0 for an empty store. */
    long newest() {
        return newest;
    }

    /** Whether a record with this timestamp is newer than every stored record, whatever its writer. */
    boolean isAboveAllStored(long timestamp) {
        return Long.compareUnsigned(timestamp, newest) > 0;
    }

    /**
     * Call before writing {@code batch}, whose largest put timestamp is {@code batchNewest}: raises the
     * kept ceiling in it when that would no longer cover the store.
     */
    void addTo(WriteBatch batch, long batchNewest) {
        // Past the newest too: a batch that failed may have reached the log with its records.
        long atLeast = Long.compareUnsigned(batchNewest, newest) > 0 ? batchNewest : newest;
        pending = 0;
        if (Long.compareUnsigned(atLeast, kept) > 0) {
            long value = atLeast + HEADROOM;
            pending = Long.compareUnsigned(value, atLeast) < 0 ? -1L : value; // -1: unsigned overflow
            batch.put(KEY, encode(pending));
        }
    }

    /**
     * Call once the batch given to {@link #addTo}, whose largest put timestamp is {@code batchNewest},
     * was written ({@code written}) or failed (it may still have reached the log).
     */
    void afterWrite(long batchNewest, boolean written) {
        if (written && pending != 0) {
            kept = pending;
        }
        if (isAboveAllStored(batchNewest)) {
            newest = batchNewest;
        }
    }

    private static byte[] encode(long timestamp) {
        return ByteBuffer.allocate(Long.BYTES).putLong(timestamp).array();
    }
}
