package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The on-disk encoding of a {@link Record}, the LevelDB value of a key. Layout (big-endian):
 *
 * <pre>
 *   byte    format version (1)
 *   byte    flags: bit 0 = tombstone, bit 1 = has expiry
 *   long    HLC timestamp
 *   long    expiry, epoch ms           (only when "has expiry")
 *   byte    writer id length N (1..255)
 *   N bytes writer id, UTF-8
 *   rest    value bytes
 * </pre>
 *
 * The version byte lets a later format be read beside this one; decoding rejects anything it does
 * not understand instead of guessing.
 */
public final class RecordCodec {

    static final byte FORMAT_V1 = 1;
    private static final int FLAG_TOMBSTONE = 1;
    private static final int FLAG_EXPIRES = 2;
    private static final int MAX_WRITER_BYTES = 255;

    private RecordCodec() {
    }

    public static byte[] encode(Record record) {
        byte[] writer = record.writer().getBytes(StandardCharsets.UTF_8);
        if (writer.length == 0 || writer.length > MAX_WRITER_BYTES) {
            throw new IllegalArgumentException("writer id must be 1.." + MAX_WRITER_BYTES + " bytes: " + record.writer());
        }
        boolean expires = record.expiresAtMillis() != Record.NEVER_EXPIRES;
        int size = 2 + Long.BYTES + (expires ? Long.BYTES : 0) + 1 + writer.length + record.value().length;
        ByteBuffer out = ByteBuffer.allocate(size);
        out.put(FORMAT_V1);
        out.put((byte) ((record.tombstone() ? FLAG_TOMBSTONE : 0) | (expires ? FLAG_EXPIRES : 0)));
        out.putLong(record.timestamp());
        if (expires) {
            out.putLong(record.expiresAtMillis());
        }
        out.put((byte) writer.length);
        out.put(writer);
        out.put(record.value());
        return out.array();
    }

    /** @throws CorruptRecordException when the bytes are not a record this codec wrote */
    public static Record decode(byte[] bytes) {
        try {
            ByteBuffer in = ByteBuffer.wrap(bytes);
            byte format = in.get();
            if (format != FORMAT_V1) {
                throw new CorruptRecordException("unknown record format " + format);
            }
            int flags = in.get();
            if ((flags & ~(FLAG_TOMBSTONE | FLAG_EXPIRES)) != 0) {
                throw new CorruptRecordException("unknown record flags " + flags);
            }
            long timestamp = in.getLong();
            long expiresAt = (flags & FLAG_EXPIRES) != 0 ? in.getLong() : Record.NEVER_EXPIRES;
            int writerLength = Byte.toUnsignedInt(in.get());
            if (writerLength == 0) {
                throw new CorruptRecordException("empty writer id");
            }
            byte[] writer = new byte[writerLength];
            in.get(writer);
            byte[] value = new byte[in.remaining()];
            in.get(value);
            return new Record(timestamp, new String(writer, StandardCharsets.UTF_8),
                    (flags & FLAG_TOMBSTONE) != 0, expiresAt, value);
        } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
            throw new CorruptRecordException("truncated or invalid record of " + bytes.length + " bytes", e);
        }
    }

    /** Thrown when stored bytes cannot be decoded; the store is damaged or from a newer version. */
    public static final class CorruptRecordException extends RuntimeException {
        CorruptRecordException(String message) {
            super(message);
        }

        CorruptRecordException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
