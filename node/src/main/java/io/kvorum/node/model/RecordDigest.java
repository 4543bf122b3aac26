package io.kvorum.node.model;

import com.google.common.hash.HashCode;
import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Objects;

/**
 * The version of a {@link Record} without its value: what a replica answers to a digest read, so
 * that a coordinator can tell whether replicas agree without moving every value. Two records have
 * equal digests exactly when they are the same version (barring a hash collision).
 *
 * <p>The value's hash is MurmurHash3 x64 128-bit (Guava's {@code Hashing.murmur3_128()}, seed 0):
 * fast (several GB/s, so hashing on every read needs no stored hash), well distributed, and already
 * on the node's classpath. It is not cryptographic; it only tells apart two values that claim the
 * same (timestamp, writer), which a correct cluster never produces, so a collision costs nothing
 * that last-write-wins would have saved.
 *
 * @param valueHash the value's 16 hash bytes; not copied, do not mutate
 */
public record RecordDigest(long timestamp, String writer, boolean tombstone, long expiresAtMillis, byte[] valueHash) {

    /** Bytes of {@link #valueHash}. */
    public static final int HASH_BYTES = 16;
    private static final HashFunction VALUE_HASH = Hashing.murmur3_128();
    private static final byte[] EMPTY = new byte[0];
    private static final Comparator<RecordDigest> ORDER = Comparator.nullsFirst((a, b) -> {
        int c = Record.compareStamps(a.timestamp, a.writer, a.tombstone, a.expiresAtMillis,
                b.timestamp, b.writer, b.tombstone, b.expiresAtMillis);
        return c != 0 ? c : Arrays.compareUnsigned(a.valueHash, b.valueHash);
    });

    public RecordDigest {
        Objects.requireNonNull(writer, "writer");
        if (valueHash.length != HASH_BYTES) {
            throw new IllegalArgumentException("a value hash has " + HASH_BYTES + " bytes, not " + valueHash.length);
        }
        if (expiresAtMillis < 0) {
            throw new IllegalArgumentException("negative expiry: " + expiresAtMillis);
        }
    }

    /** The digest of {@code record}; null for null (no version). Hashes the whole value. */
    public static RecordDigest of(Record record) {
        if (record == null) {
            return null;
        }
        HashCode hash = VALUE_HASH.hashBytes(record.value());
        return new RecordDigest(record.timestamp(), record.writer(), record.tombstone(), record.expiresAtMillis(),
                hash.asBytes());
    }

    /**
     * The record this digest stands for, when the digest says all of it: a tombstone carries no
     * value. Throws for a value's digest.
     */
    public Record tombstoneRecord() {
        if (!tombstone) {
            throw new IllegalStateException("a value's digest does not carry the value");
        }
        return new Record(timestamp, writer, true, expiresAtMillis, EMPTY);
    }

    /**
     * Last-write-wins on digests: as {@link Record#compareVersions} up to the value, then the value
     * hashes (unsigned), so that the order stays total. Null is older than any version.
     */
    public static int compareVersions(RecordDigest a, RecordDigest b) {
        return ORDER.compare(a, b);
    }

    /** True when this version wins over {@code other} (null counts as the oldest version). */
    public boolean isNewerThan(RecordDigest other) {
        return compareVersions(this, other) > 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RecordDigest d && compareVersions(this, d) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(timestamp, writer, tombstone, expiresAtMillis, Arrays.hashCode(valueHash));
    }

    @Override
    public String toString() {
        return "RecordDigest{ts=" + timestamp + ", writer=" + writer + (tombstone ? ", tombstone" : "")
                + (expiresAtMillis != Record.NEVER_EXPIRES ? ", expiresAt=" + expiresAtMillis : "")
                + "}"; // no hash: it could give a short value away
    }
}
