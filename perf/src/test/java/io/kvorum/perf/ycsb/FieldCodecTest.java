package io.kvorum.perf.ycsb;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FieldCodecTest {

    @Test
    void roundTripKeepsNamesValuesAndOrder() {
        Map<String, byte[]> fields = new LinkedHashMap<>();
        fields.put("field9", "last written first".getBytes(UTF_8));
        fields.put("empty", new byte[0]);
        fields.put("имя", "non-ASCII name".getBytes(UTF_8));
        fields.put("🔑", new byte[] {0, (byte) 0xff, '\n', 0});
        fields.put("", "empty name".getBytes(UTF_8));

        Map<String, byte[]> decoded = FieldCodec.decode(FieldCodec.encode(fields));

        assertThat(decoded.keySet()).containsExactlyElementsOf(fields.keySet());
        fields.forEach((name, value) -> assertThat(decoded.get(name)).as(name).isEqualTo(value));
    }

    @Test
    void emptyRecordIsOneByte() {
        byte[] encoded = FieldCodec.encode(Map.of());

        assertThat(encoded).containsExactly(0);
        assertThat(FieldCodec.decode(encoded)).isEmpty();
    }

    @Test
    void layoutIsCountThenLengthPrefixedNamesAndValues() {
        Map<String, byte[]> fields = new LinkedHashMap<>();
        fields.put("a", "xy".getBytes(UTF_8));
        fields.put("é", new byte[0]);

        assertThat(FieldCodec.encode(fields)).containsExactly(2, 1, 'a', 2, 'x', 'y', 2, 0xc3, 0xa9, 0);
    }

    @Test
    void lengthsOf128AndMoreTakeSeveralBytes() {
        byte[] big = new byte[300];
        Arrays.fill(big, (byte) 7);

        byte[] encoded = FieldCodec.encode(Map.of("f", big));

        // count 1, name length 1, "f", then 300 = 0b10_0101100 as 0xac 0x02.
        assertThat(Arrays.copyOf(encoded, 5)).containsExactly(1, 1, 'f', 0xac, 0x02);
        assertThat(encoded).hasSize(5 + 300);
        assertThat(FieldCodec.decode(encoded).get("f")).isEqualTo(big);
    }

    @Test
    void truncatedRecordIsRejected() {
        byte[] encoded = FieldCodec.encode(Map.of("field0", "value".getBytes(UTF_8)));

        for (int length = 0; length < encoded.length; length++) {
            byte[] truncated = Arrays.copyOf(encoded, length);
            assertThatThrownBy(() -> FieldCodec.decode(truncated)).as("first %d bytes", length)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void trailingBytesAreRejected() {
        byte[] encoded = FieldCodec.encode(Map.of("field0", "value".getBytes(UTF_8)));
        byte[] longer = Arrays.copyOf(encoded, encoded.length + 1);

        assertThatThrownBy(() -> FieldCodec.decode(longer)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("trailing");
    }

    @Test
    void nameThatIsNotUtf8IsRejected() {
        byte[] record = {1, 1, (byte) 0xff, 0};

        assertThatThrownBy(() -> FieldCodec.decode(record)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("UTF-8");
    }

    @Test
    void hugeFieldCountIsRejectedBeforeAllocating() {
        byte[] record = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07};

        assertThatThrownBy(() -> FieldCodec.decode(record)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fields");
    }
}
