package io.kvorum.node.model;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One version of a key, as stored, replicated and compared: a value or a tombstone, stamped with
 * the coordinator's hybrid-logical-clock timestamp and the coordinator's node id, optionally with
 * an absolute expiry.
 *
 * <p>Versions are totally ordered by {@link #compareVersions}: the newer version wins everywhere
 * (write, read merge, read repair, hint replay, anti-entropy), so replicas that exchanged their
 * records hold the same one whatever the order of exchange.
 *
 * @param timestamp       HLC timestamp assigned by the coordinator ({@code HybridLogicalClock})
 * @param writer          id of the coordinating node; breaks timestamp ties
 * @param tombstone       true for a delete; the value is then empty
 * @param expiresAtMillis epoch milliseconds after which the record reads as absent; 0 = never
 * @param value           the value bytes; never null, possibly empty. Not copied: do not mutate.
 */
public record Record(long timestamp, String writer, boolean tombstone, long expiresAtMillis, byte[] value) {

    public static final long NEVER_EXPIRES = 0;
    private static final byte[] EMPTY = new byte[0];

    public Record {
        Objects.requireNonNull(writer, "writer");
        Objects.requireNonNull(value, "value");
        if (tombstone && value.length > 0) {
            throw new IllegalArgumentException("a tombstone carries no value");
        }
        if (expiresAtMillis < 0) {
            throw new IllegalArgumentException("negative expiry: " + expiresAtMillis);
        }
    }

    public static Record value(long timestamp, String writer, byte[] value, long expiresAtMillis) {
        return new Record(timestamp, writer, false, expiresAtMillis, value);
    }

    public static Record tombstone(long timestamp, String writer) {
        return new Record(timestamp, writer, true, NEVER_EXPIRES, EMPTY);
    }

    /** True when the record has an expiry and it has passed at {@code nowMillis}. */
    public boolean isExpiredAt(long nowMillis) {
        return expiresAtMillis != NEVER_EXPIRES && nowMillis >= expiresAtMillis;
    }

    /** True when a read at {@code nowMillis} must answer this record as absent. */
    public boolean readsAsAbsentAt(long nowMillis) {
        return tombstone || isExpiredAt(nowMillis);
    }

    /** True when this record wins over {@code other} (null counts as the oldest version). */
    public boolean isNewerThan(Record other) {
        return compareVersions(this, other) > 0;
    }

    /**
     * The compare rule of last-write-wins: timestamp, then writer id (byte order), then a tombstone
     * over a value, then the later expiry, then value bytes. The last three only matter for two
     * records that claim the same (timestamp, writer), which a correct cluster never produces; they
     * keep the order total so that replicas converge regardless.
     * A null record is older than any record.
     */
    public static int compareVersions(Record a, Record b) {
        if (a == b) {
            return 0;
        }
        if (a == null) {
            return -1;
        }
        if (b == null) {
            return 1;
        }
        int c = compareStamps(a.timestamp, a.writer, a.tombstone, a.expiresAtMillis,
                b.timestamp, b.writer, b.tombstone, b.expiresAtMillis);
        return c != 0 ? c : Arrays.compareUnsigned(a.value, b.value);
    }

    /** {@link #compareVersions} up to the value: what {@link RecordDigest} orders by before its hash. */
    static int compareStamps(long aTimestamp, String aWriter, boolean aTombstone, long aExpiresAt,
                             long bTimestamp, String bWriter, boolean bTombstone, long bExpiresAt) {
        int c = Long.compareUnsigned(aTimestamp, bTimestamp);
        if (c != 0) {
            return c;
        }
        c = Arrays.compareUnsigned(aWriter.getBytes(StandardCharsets.UTF_8), bWriter.getBytes(StandardCharsets.UTF_8));
        if (c != 0) {
            return c;
        }
        c = Boolean.compare(aTombstone, bTombstone);
        if (c != 0) {
            return c;
        }
        return Long.compare(expiryOrder(aExpiresAt), expiryOrder(bExpiresAt));
    }

    private static long expiryOrder(long expiresAtMillis) {
        return expiresAtMillis == NEVER_EXPIRES ? Long.MAX_VALUE : expiresAtMillis;
    }

    /** The newer of two versions (either may be null). */
    public static Record newest(Record a, Record b) {
        return compareVersions(a, b) >= 0 ? a : b;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Record r && compareVersions(this, r) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(timestamp, writer, tombstone, expiryOrder(expiresAtMillis), Arrays.hashCode(value));
    }

    @Override
    public String toString() {
        return "Record{ts=" + timestamp + ", writer=" + writer + (tombstone ? ", tombstone" : "")
                + (expiresAtMillis != NEVER_EXPIRES ? ", expiresAt=" + expiresAtMillis : "")
                + ", " + value.length + " bytes}";
    }
}
