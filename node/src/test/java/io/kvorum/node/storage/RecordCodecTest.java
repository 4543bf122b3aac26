package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.storage.RecordCodec.CorruptRecordException;
import io.kvorum.node.time.HybridLogicalClock;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RecordCodecTest {

    private static final long TS = HybridLogicalClock.pack(1_700_000_000_000L, 7);

    private static Record roundTrip(Record r) {
        return RecordCodec.decode(RecordCodec.encode(r));
    }

    /** Field-by-field, so that the test does not depend on Record.equals. */
    private static void assertSameFields(Record actual, Record expected) {
        assertThat(actual.timestamp()).isEqualTo(expected.timestamp());
        assertThat(actual.writer()).isEqualTo(expected.writer());
        assertThat(actual.tombstone()).isEqualTo(expected.tombstone());
        assertThat(actual.expiresAtMillis()).isEqualTo(expected.expiresAtMillis());
        assertThat(actual.value()).isEqualTo(expected.value());
    }

    @Test
    void valueRoundTrips() {
        Record r = Record.value(TS, "n1", "hello".getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES);
        assertSameFields(roundTrip(r), r);
    }

    @Test
    void emptyValueRoundTripsAsAValueNotATombstone() {
        Record r = Record.value(TS, "n1", new byte[0], Record.NEVER_EXPIRES);
        Record back = roundTrip(r);
        assertSameFields(back, r);
        assertThat(back.tombstone()).isFalse();
    }

    @Test
    void everyByteValueRoundTrips() {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        Record r = Record.value(TS, "n1", all, Record.NEVER_EXPIRES);
        assertSameFields(roundTrip(r), r);
    }

    @Test
    void tombstoneRoundTrips() {
        Record r = Record.tombstone(TS, "n2");
        Record back = roundTrip(r);
        assertSameFields(back, r);
        assertThat(back.tombstone()).isTrue();
        assertThat(back.value()).isEmpty();
    }

    @Test
    void expiryRoundTrips() {
        Record r = Record.value(TS, "n1", new byte[] {1, 2, 3}, 1_700_000_060_000L);
        assertSameFields(roundTrip(r), r);
    }

    @Test
    void extremeTimestampsRoundTrip() {
        for (long ts : new long[] {0L, 1L, Long.MAX_VALUE, -1L}) {
            Record r = Record.value(ts, "n1", new byte[] {42}, Long.MAX_VALUE);
            assertSameFields(roundTrip(r), r);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"n1", "узел-1", "节点", "node-\uD83D\uDE80", "x"})
    void unicodeWriterIdsRoundTrip(String writer) {
        Record r = Record.value(TS, writer, new byte[] {9}, Record.NEVER_EXPIRES);
        assertSameFields(roundTrip(r), r);
    }

    @Test
    void writerOf255BytesIsTheLongestAccepted() {
        String longest = "w".repeat(255);
        Record r = Record.value(TS, longest, new byte[0], Record.NEVER_EXPIRES);
        assertSameFields(roundTrip(r), r);

        Record tooLong = Record.value(TS, longest + "w", new byte[0], Record.NEVER_EXPIRES);
        assertThatThrownBy(() -> RecordCodec.encode(tooLong)).isInstanceOf(IllegalArgumentException.class);
        Record empty = Record.value(TS, "", new byte[0], Record.NEVER_EXPIRES);
        assertThatThrownBy(() -> RecordCodec.encode(empty)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void encodingStartsWithTheFormatByte() {
        byte[] bytes = RecordCodec.encode(Record.tombstone(TS, "n1"));
        assertThat(bytes[0]).isEqualTo(RecordCodec.FORMAT_V1);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2, 0x7f, 0x80, 0xff})
    void decodeRejectsAnUnknownFormatByte(int format) {
        byte[] bytes = RecordCodec.encode(Record.value(TS, "n1", new byte[] {1}, Record.NEVER_EXPIRES));
        bytes[0] = (byte) format;
        assertThatThrownBy(() -> RecordCodec.decode(bytes))
                .isInstanceOf(CorruptRecordException.class)
                .hasMessageContaining("format");
    }

    @ParameterizedTest
    @ValueSource(ints = {4, 8, 0x40, 0x80, 0xff})
    void decodeRejectsUnknownFlags(int flags) {
        byte[] bytes = RecordCodec.encode(Record.value(TS, "n1", new byte[] {1}, Record.NEVER_EXPIRES));
        bytes[1] = (byte) flags;
        assertThatThrownBy(() -> RecordCodec.decode(bytes))
                .isInstanceOf(CorruptRecordException.class)
                .hasMessageContaining("flags");
    }

    @Test
    void decodeRejectsEveryTruncationOfTheHeader() {
        byte[] full = RecordCodec.encode(Record.value(TS, "writer", new byte[0], 1_700_000_060_000L));
        // With an empty value, every proper prefix cuts the header or the writer id short.
        for (int length = 0; length < full.length; length++) {
            byte[] cut = Arrays.copyOf(full, length);
            assertThatThrownBy(() -> RecordCodec.decode(cut))
                    .as("prefix of %d bytes", length)
                    .isInstanceOf(CorruptRecordException.class);
        }
        assertThat(RecordCodec.decode(full).writer()).isEqualTo("writer");
    }

    @Test
    void decodeRejectsAnEmptyWriter() {
        byte[] bytes = RecordCodec.encode(Record.value(TS, "n", new byte[] {5, 6}, Record.NEVER_EXPIRES));
        int writerLengthAt = 2 + Long.BYTES;
        assertThat(bytes[writerLengthAt]).isEqualTo((byte) 1);
        bytes[writerLengthAt] = 0;
        assertThatThrownBy(() -> RecordCodec.decode(bytes))
                .isInstanceOf(CorruptRecordException.class)
                .hasMessageContaining("writer");
    }

    @Test
    void decodeRejectsATombstoneThatCarriesAValue() {
        byte[] bytes = RecordCodec.encode(Record.value(TS, "n1", new byte[] {1}, Record.NEVER_EXPIRES));
        bytes[1] = 1; // tombstone flag, but a value follows
        assertThatThrownBy(() -> RecordCodec.decode(bytes)).isInstanceOf(CorruptRecordException.class);
    }
}
