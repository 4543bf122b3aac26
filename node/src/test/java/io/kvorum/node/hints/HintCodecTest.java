package io.kvorum.node.hints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.hints.HintStore.Hint;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.RecordCodec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Pins the bytes of {@code hints/}: a data directory written before must still read. */
class HintCodecTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theKeyIsThePeerAZeroByteAndTheBigEndianSequence() {
        byte[] key = HintCodec.key("n2", 0x0102L);
        assertThat(key).containsExactly('n', '2', 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02);
        assertThat(HintCodec.peerOf(key)).isEqualTo("n2");
        assertThat(HintCodec.seqOf(key)).isEqualTo(0x0102L);
    }

    @Test
    void aPeersPrefixDoesNotMatchAPeerWhoseIdItStarts() {
        byte[] prefix = HintCodec.peerPrefix("n1");
        assertThat(HintCodec.hasPrefix(HintCodec.key("n1", 7), prefix)).isTrue();
        assertThat(HintCodec.hasPrefix(HintCodec.key("n10", 7), prefix)).isFalse();
    }

    @Test
    void theValueIsFormatCreationTimeKeyAndRecord() {
        Record record = Record.value(5, "n3", utf8("v"), 1_700_000_060_000L);
        byte[] encodedRecord = RecordCodec.encode(record);
        byte[] expected = ByteBuffer.allocate(1 + 8 + 4 + 1 + encodedRecord.length)
                .put((byte) 1).putLong(1_700_000_000_000L).putInt(1).put(utf8("k")).put(encodedRecord).array();

        assertThat(HintCodec.value(utf8("k"), record, 1_700_000_000_000L)).isEqualTo(expected);
        Hint hint = HintCodec.decode("n2", 9, expected);
        assertThat(hint.peer()).isEqualTo("n2");
        assertThat(hint.seq()).isEqualTo(9);
        assertThat(hint.key()).isEqualTo(utf8("k"));
        assertThat(hint.record()).isEqualTo(record);
        assertThat(hint.createdAtMillis()).isEqualTo(1_700_000_000_000L);
    }

    @Test
    void anUnknownFormatIsRefused() {
        byte[] value = HintCodec.value(utf8("k"), Record.tombstone(1, "n1"), 0);
        value[0] = 2;
        assertThatThrownBy(() -> HintCodec.decode("n2", 1, value)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("unknown hint format 2");
    }
}
