package io.kvorum.node.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RecordDigestTest {

    private static Record value(long ts, String writer, String value, long expiresAt) {
        return Record.value(ts, writer, value.getBytes(StandardCharsets.UTF_8), expiresAt);
    }

    @Test
    void theSameVersionHasTheSameDigestAndAnyDifferenceChangesIt() {
        RecordDigest d = RecordDigest.of(value(5, "n1", "v", 0));
        assertThat(RecordDigest.of(value(5, "n1", "v", 0))).isEqualTo(d).hasSameHashCodeAs(d);
        assertThat(RecordDigest.of(value(6, "n1", "v", 0))).isNotEqualTo(d);
        assertThat(RecordDigest.of(value(5, "n2", "v", 0))).isNotEqualTo(d);
        assertThat(RecordDigest.of(value(5, "n1", "w", 0))).isNotEqualTo(d);
        assertThat(RecordDigest.of(value(5, "n1", "v", 99))).isNotEqualTo(d);
        assertThat(RecordDigest.of(null)).isNull();
        assertThat(d.valueHash()).hasSize(RecordDigest.HASH_BYTES);
    }

    @Test
    void digestsOrderAsTheirRecordsDoUpToTheValue() {
        Record[] ascending = {
            value(5, "n1", "z", 0), value(5, "n2", "a", 0), Record.tombstone(5, "n2"), value(6, "n0", "a", 10),
            value(6, "n0", "a", 0)};
        for (int i = 0; i < ascending.length; i++) {
            for (int j = 0; j < ascending.length; j++) {
                assertThat(Integer.signum(RecordDigest.compareVersions(
                        RecordDigest.of(ascending[i]), RecordDigest.of(ascending[j]))))
                        .as("%s against %s", ascending[i], ascending[j])
                        .isEqualTo(Integer.signum(Record.compareVersions(ascending[i], ascending[j])))
                        .isEqualTo(Integer.compare(i, j));
            }
        }
        assertThat(RecordDigest.of(ascending[0]).isNewerThan(null)).isTrue();
    }

    @Test
    void aTombstonesDigestIsTheWholeTombstoneButAValuesIsNot() {
        Record deleted = new Record(7, "n3", true, 1234, new byte[0]);
        assertThat(RecordDigest.of(deleted).tombstoneRecord()).isEqualTo(deleted);
        assertThatThrownBy(() -> RecordDigest.of(value(7, "n3", "v", 0)).tombstoneRecord())
                .isInstanceOf(IllegalStateException.class);
    }
}
