package io.kvorum.node.hints;

import io.kvorum.node.hints.HintStore.Hint;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.RecordCodec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * How a hint is laid out in the hint database ({@code hints/} in {@code docs/architecture.md}).
 *
 * <p>The key is the peer id (UTF-8; node ids never contain a zero byte), a zero byte, and a
 * big-endian sequence number, so that one peer's hints are contiguous and iterate in arrival order.
 * The value is a format byte, the hint's creation time (epoch ms), the key's length and the key,
 * and the {@link RecordCodec} record, whose expiry keeps a TTL across the handoff.
 */
final class HintCodec {

    private static final byte FORMAT_V1 = 1;

    private HintCodec() {
    }

    /** The database key of the peer's hint number {@code seq}. */
    static byte[] key(String peer, long seq) {
        byte[] id = peer.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(id.length + 1 + Long.BYTES).put(id).put((byte) 0).putLong(seq).array();
    }

    /** What every database key of the peer's hints starts with. */
    static byte[] peerPrefix(String peer) {
        byte[] key = key(peer, 0);
        return Arrays.copyOf(key, key.length - Long.BYTES);
    }

    static boolean hasPrefix(byte[] key, byte[] prefix) {
        return key.length >= prefix.length && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }

    static String peerOf(byte[] key) {
        return new String(key, 0, key.length - 1 - Long.BYTES, StandardCharsets.UTF_8);
    }

    static long seqOf(byte[] key) {
        return ByteBuffer.wrap(key, key.length - Long.BYTES, Long.BYTES).getLong();
    }

    /** The database value of a hint of {@code key} and {@code record}. */
    static byte[] value(byte[] key, Record record, long createdAtMillis) {
        byte[] r = RecordCodec.encode(record);
        return ByteBuffer.allocate(1 + Long.BYTES + Integer.BYTES + key.length + r.length)
                .put(FORMAT_V1).putLong(createdAtMillis).putInt(key.length).put(key).put(r).array();
    }

    /** The hint stored under the peer's {@code seq} as {@code value}. */
    static Hint decode(String peer, long seq, byte[] value) {
        ByteBuffer in = ByteBuffer.wrap(value);
        byte format = in.get();
        if (format != FORMAT_V1) {
            throw new IllegalStateException("unknown hint format " + format + " for " + peer + " #" + seq);
        }
        long createdAt = in.getLong();
        byte[] key = new byte[in.getInt()];
        in.get(key);
        byte[] record = new byte[in.remaining()];
        in.get(record);
        return new Hint(peer, seq, key, RecordCodec.decode(record), createdAt);
    }
}
