package io.kvorum.perf.ycsb;

import java.io.ByteArrayOutputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The value format of a YCSB record in Kvorum: its fields, as one byte string.
 *
 * <pre>
 * record = count field*          count: the number of fields
 * field  = nameLength name valueLength value
 * </pre>
 *
 * Every count and length is an unsigned LEB128 varint (7 bits a byte, low bits first, high bit
 * set on every byte but the last), so YCSB's ten 100-byte fields cost 2 bytes of framing each.
 * Names are UTF-8; values are raw bytes and may be empty. Fields are written in the map's
 * iteration order and decoded in the same order; a name that appears twice keeps its last value.
 * Decoding rejects anything that is not exactly one record (truncated, trailing bytes, a length
 * beyond the end, invalid UTF-8 in a name) with an {@link IllegalArgumentException}.
 */
public final class FieldCodec {

    private FieldCodec() {
    }

    /** The record's bytes. */
    public static byte[] encode(Map<String, byte[]> fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + fields.size() * 16);
        writeVarint(out, fields.size());
        for (Map.Entry<String, byte[]> field : fields.entrySet()) {
            byte[] name = field.getKey().getBytes(StandardCharsets.UTF_8);
            byte[] value = field.getValue();
            writeVarint(out, name.length);
            out.writeBytes(name);
            writeVarint(out, value.length);
            out.writeBytes(value);
        }
        return out.toByteArray();
    }

    /** The fields of a record, in the order they were encoded. */
    public static Map<String, byte[]> decode(byte[] record) {
        Reader in = new Reader(record);
        int count = in.varint();
        // Each field takes at least 2 bytes, so a larger count is corrupt; checking first bounds the map.
        if (count > (record.length - in.position) / 2) {
            throw new IllegalArgumentException("record claims " + count + " fields in " + record.length + " bytes");
        }
        Map<String, byte[]> fields = new LinkedHashMap<>(count * 2);
        for (int i = 0; i < count; i++) {
            String name = in.utf8(in.bytes(in.varint()));
            fields.put(name, in.bytes(in.varint()));
        }
        if (in.position != record.length) {
            throw new IllegalArgumentException((record.length - in.position) + " trailing bytes after " + count + " fields");
        }
        return fields;
    }

    private static void writeVarint(ByteArrayOutputStream out, int value) {
        int v = value;
        while ((v & ~0x7f) != 0) {
            out.write((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write(v);
    }

    /** A cursor over a record being decoded. */
    private static final class Reader {
        private final byte[] bytes;
        private int position;

        Reader(byte[] bytes) {
            this.bytes = bytes;
        }

        int varint() {
            int value = 0;
            for (int shift = 0; shift < 32; shift += 7) {
                if (position >= bytes.length) {
                    throw new IllegalArgumentException("record truncated inside a length at byte " + position);
                }
                int b = bytes[position++] & 0xff;
                value |= (b & 0x7f) << shift;
                if ((b & 0x80) == 0) {
                    if (value < 0) {
                        throw new IllegalArgumentException("length over 2^31 at byte " + position);
                    }
                    return value;
                }
            }
            throw new IllegalArgumentException("length longer than 5 bytes at byte " + position);
        }

        byte[] bytes(int length) {
            if (length > bytes.length - position) {
                throw new IllegalArgumentException("field of " + length + " bytes at byte " + position
                        + " runs past the end of a " + bytes.length + "-byte record");
            }
            byte[] slice = Arrays.copyOfRange(bytes, position, position + length);
            position += length;
            return slice;
        }

        String utf8(byte[] name) {
            try {
                return StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(java.nio.ByteBuffer.wrap(name)).toString();
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("field name is not valid UTF-8 before byte " + position, e);
            }
        }
    }
}
