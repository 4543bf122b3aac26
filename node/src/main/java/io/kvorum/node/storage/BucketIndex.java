package io.kvorum.node.storage;

import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.WriteBatch;

/**
 * An index of the store by anti-entropy bucket, kept in the same LevelDB as the records and
 * written in the same batch as every change, so that it is exactly as durable as they are and a
 * crash can never leave the two apart.
 *
 * <p>Why: anti-entropy compares replicas by the hashes of buckets of keys (a key's bucket is the
 * top {@value #BUCKET_BITS} bits of {@link #keyHash}, the same on every node). With this index a
 * node reads one bucket's keys and record hashes by a short range scan of small entries, instead
 * of reading and hashing every record it holds, and a write updates it blindly: the index key is a
 * function of the record's key, so the new entry replaces the old one without reading it.
 *
 * <p>Layout: an index entry is {@code 0xFF 0x01 b2 b1 b0 key -> recordHash} (bucket big-endian in
 * three bytes, hash as 8 bytes big-endian). Record keys never start with {@code 0xFF}: they are
 * UTF-8 (docs/http-api.md), and no UTF-8 string starts with that byte; {@link LevelDbStore} refuses such a
 * key and keeps cursors below {@link #RESERVED_PREFIX}. {@code 0xFF 0x00} marks a store whose
 * index is complete; an older store without it gets its index built once, when it is opened.
 * {@code 0xFF 0x02} is not the index's: it holds {@link StoredTimestampCeiling}.
 *
 * <p>Stable across versions and nodes: both sides of a comparison must hash alike.
 */
public final class BucketIndex {

    /** Buckets in the index: 2^20. Trees of up to this many leaves read it directly. */
    public static final int BUCKET_BITS = 20;
    /** The first byte of every key that is not a record's; record cursors stop before it. */
    static final byte[] RESERVED_PREFIX = {(byte) 0xFF};
    private static final byte INDEX_TAG = 0x01;
    private static final byte[] COMPLETE_MARKER = {(byte) 0xFF, 0x00};
    private static final byte[] FORMAT = "1".getBytes(StandardCharsets.US_ASCII);
    private static final int HEADER = 5;
    /** Node ids seen as writers; a peer could send any, so the memory of them is bounded. */
    private static final int MAX_REMEMBERED_WRITERS = 1024;
    private static final Map<String, Long> WRITER_HASHES = new ConcurrentHashMap<>();

    private BucketIndex() {
    }

    /** One index entry: a record's key, its bucket, and the hash of its version. */
    public record IndexEntry(int bucket, byte[] key, long recordHash) {
    }

    /** Whether {@code key} is reserved for the store's own entries (never a record's key). */
    static boolean isReserved(byte[] key) {
        return key.length > 0 && key[0] == RESERVED_PREFIX[0];
    }

    /** The bucket of a key: the top {@value #BUCKET_BITS} bits of its {@link #keyHash}. */
    public static int bucketOf(byte[] key) {
        return (int) (keyHash(key) >>> (64 - BUCKET_BITS));
    }

    /** What one record contributes to its bucket: a hash of the key's hash and the record's version. */
    public static long recordHash(byte[] key, Record record) {
        return recordHash(keyHash(key), record);
    }

    /** {@link #recordHash(byte[], Record)} of a key whose {@link #keyHash} is known. */
    public static long recordHash(long keyHash, Record record) {
        long h = mix(keyHash ^ record.timestamp());
        h = mix(h ^ writerHash(record.writer()));
        h = mix(h ^ (record.tombstone() ? 0x5bd1e995L : 0x1b873593L));
        return mix(h ^ record.expiresAtMillis());
    }

    /**
     * {@link #keyHash} of a writer id's UTF-8 bytes, remembered for the few ids a cluster has, so
     * that indexing a put neither encodes nor hashes the same id again.
     */
    private static long writerHash(String writer) {
        Long known = WRITER_HASHES.get(writer);
        if (known != null) {
            return known;
        }
        long h = keyHash(writer.getBytes(StandardCharsets.UTF_8));
        if (WRITER_HASHES.size() < MAX_REMEMBERED_WRITERS) {
            WRITER_HASHES.put(writer, h);
        }
        return h;
    }

    /**
     * A 64-bit hash of the key bytes: FNV-1a, then a finalizer. Seeded apart from the placement
     * hash, so that buckets and replica sets are independent.
     */
    public static long keyHash(byte[] key) {
        long h = 0xcbf29ce484222325L ^ 0x6a09e667f3bcc908L;
        for (byte b : key) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return mix(h);
    }

    /** The splitmix64 finalizer. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Adds to {@code batch} the index entry of {@code record} stored under {@code key}; returns its bucket. */
    static int put(WriteBatch batch, byte[] key, Record record) {
        long keyHash = keyHash(key);
        int bucket = (int) (keyHash >>> (64 - BUCKET_BITS));
        batch.put(indexKey(bucket, key), longBytes(recordHash(keyHash, record)));
        return bucket;
    }

    /** {@link #put} of {@code replacement}, or the removal of the key's entry when it is null; returns the bucket. */
    static int replace(WriteBatch batch, byte[] key, Record replacement) {
        if (replacement != null) {
            return put(batch, key, replacement);
        }
        int bucket = bucketOf(key);
        batch.delete(indexKey(bucket, key));
        return bucket;
    }

    /** Whether the index of {@code db} is complete (false: build it with {@link #rebuild}). */
    static boolean isComplete(DB db) {
        return db.get(COMPLETE_MARKER) != null;
    }

    /** Marks the index of {@code db} incomplete: the database is about to change without it. */
    static void markIncomplete(DB db) {
        if (isComplete(db)) {
            db.delete(COMPLETE_MARKER);
        }
    }

    /**
     * Deletes every index entry, then indexes every record that {@code records} gives (a batch at
     * a time, empty at the end), then marks the index complete. Entries left from an earlier
     * indexed life of the store may describe records deleted since, hence the clean start.
     */
    static void rebuild(DB db, Supplier<List<Entry>> records) {
        try (DBIterator iterator = db.iterator()) {
            iterator.seek(bucketStart(0));
            byte[] end = bucketStart(1 << BUCKET_BITS);
            List<byte[]> stale = new ArrayList<>();
            for (Map.Entry<byte[], byte[]> e; iterator.hasNext()
                    && (e = DbIterators.readOrEnd(iterator::next)) != null
                    && Arrays.compareUnsigned(e.getKey(), end) < 0; ) {
                stale.add(e.getKey());
                if (stale.size() == 4096) {
                    deleteAll(db, stale);
                }
            }
            deleteAll(db, stale);
        } catch (IOException e) {
            throw new StorageException("clearing the index failed", e);
        }
        List<Entry> chunk;
        while (!(chunk = records.get()).isEmpty()) {
            try (WriteBatch batch = db.createWriteBatch()) {
                for (Entry e : chunk) {
                    put(batch, e.key(), e.record());
                }
                db.write(batch);
            } catch (IOException e) {
                throw new StorageException("indexing the store failed", e);
            }
        }
        db.put(COMPLETE_MARKER, FORMAT);
    }

    private static void deleteAll(DB db, List<byte[]> keys) {
        try (WriteBatch batch = db.createWriteBatch()) {
            keys.forEach(batch::delete);
            db.write(batch);
        } catch (IOException e) {
            throw new StorageException("clearing the index failed", e);
        }
        keys.clear();
    }

    static byte[] indexKey(int bucket, byte[] key) {
        byte[] out = new byte[HEADER + key.length];
        writeHeader(out, bucket);
        System.arraycopy(key, 0, out, HEADER, key.length);
        return out;
    }

    /** The first index key of {@code bucket} (also the end, exclusive, of {@code bucket - 1}). */
    static byte[] bucketStart(int bucket) {
        if (bucket >= 1 << BUCKET_BITS) {
            return new byte[] {(byte) 0xFF, INDEX_TAG + 1};
        }
        byte[] out = new byte[HEADER];
        writeHeader(out, bucket);
        return out;
    }

    private static void writeHeader(byte[] out, int bucket) {
        out[0] = RESERVED_PREFIX[0];
        out[1] = INDEX_TAG;
        out[2] = (byte) (bucket >>> 16);
        out[3] = (byte) (bucket >>> 8);
        out[4] = (byte) bucket;
    }

    /**
     * Calls {@code action} with the index entries of buckets {@code from <= bucket < to} in order,
     * starting after key {@code after} of bucket {@code from} (null: at its start), until
     * {@code action} returns false.
     */
    static void forEach(DBIterator iterator, int from, int to, byte[] after, Predicate<IndexEntry> action) {
        byte[] end = bucketStart(to);
        byte[] start = after == null ? bucketStart(from) : indexKey(from, after);
        for (iterator.seek(start); iterator.hasNext(); ) {
            Map.Entry<byte[], byte[]> e = DbIterators.readOrEnd(iterator::next);
            if (e == null) {
                break;
            }
            byte[] k = e.getKey();
            if (Arrays.compareUnsigned(k, end) >= 0) {
                break;
            }
            if (after != null && Arrays.equals(k, start)) {
                continue;
            }
            int bucket = ((k[2] & 0xff) << 16) | ((k[3] & 0xff) << 8) | (k[4] & 0xff);
            if (!action.test(new IndexEntry(bucket, Arrays.copyOfRange(k, HEADER, k.length), bytesLong(e.getValue())))) {
                break;
            }
        }
    }

    private static byte[] longBytes(long v) {
        byte[] out = new byte[8];
        for (int i = 7; i >= 0; i--) {
            out[i] = (byte) v;
            v >>>= 8;
        }
        return out;
    }

    private static long bytesLong(byte[] b) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }
}
