package io.kvorum.node.model;

import static io.kvorum.node.model.Record.compareVersions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RecordTest {

    private static final byte[] V = {1};

    private static Record value(long ts, String writer) {
        return Record.value(ts, writer, V, Record.NEVER_EXPIRES);
    }

    @Test
    void timestampDecidesFirst() {
        Record older = Record.tombstone(100, "zzz");
        Record newer = value(101, "aaa");
        assertThat(compareVersions(newer, older)).isPositive();
        assertThat(compareVersions(older, newer)).isNegative();
        assertThat(newer.isNewerThan(older)).isTrue();
        assertThat(older.isNewerThan(newer)).isFalse();
    }

    @Test
    void writerIdBreaksATimestampTie() {
        Record a = value(100, "n1");
        Record b = value(100, "n2");
        assertThat(compareVersions(b, a)).isPositive();
        assertThat(compareVersions(a, b)).isNegative();
        assertThat(b.isNewerThan(a)).isTrue();
    }

    @Test
    void writerIdsCompareAsUnsignedUtf8Bytes() {
        // 'é' is 0xC3 0xA9 in UTF-8: above every ASCII byte when compared unsigned.
        Record ascii = value(100, "z");
        Record accented = value(100, "é");
        assertThat(compareVersions(accented, ascii)).isPositive();
        // UTF-16 order would put U+FF5A (fullwidth z) above U+1F600, UTF-8 byte order does not.
        Record fullwidth = value(100, "\uFF5A");
        Record emoji = value(100, "\uD83D\uDE00");
        assertThat(compareVersions(emoji, fullwidth)).isPositive();
        // A prefix sorts first.
        assertThat(compareVersions(value(100, "n1"), value(100, "n10"))).isNegative();
    }

    @Test
    void tombstoneWinsOverAValueOfTheSameTimestampAndWriter() {
        Record v = value(100, "n1");
        Record t = Record.tombstone(100, "n1");
        assertThat(t.isNewerThan(v)).isTrue();
        assertThat(v.isNewerThan(t)).isFalse();
        assertThat(Record.newest(v, t)).isSameAs(t);
        assertThat(Record.newest(t, v)).isSameAs(t);
    }

    @Test
    void nullIsOlderThanAnyRecord() {
        Record r = value(0, "a");
        assertThat(compareVersions(r, null)).isPositive();
        assertThat(compareVersions(null, r)).isNegative();
        assertThat(compareVersions(null, null)).isZero();
        assertThat(r.isNewerThan(null)).isTrue();
        assertThat(Record.newest(null, r)).isSameAs(r);
        assertThat(Record.newest(r, null)).isSameAs(r);
        assertThat(Record.newest(null, null)).isNull();
    }

    @Test
    void aRecordIsNotNewerThanAnEqualOne() {
        Record a = Record.value(100, "n1", new byte[] {1, 2}, 500);
        Record b = Record.value(100, "n1", new byte[] {1, 2}, 500);
        assertThat(compareVersions(a, b)).isZero();
        assertThat(a.isNewerThan(b)).isFalse();
        assertThat(b.isNewerThan(a)).isFalse();
        assertThat(a).isEqualTo(b);
        assertThat(a.hashCode()).isEqualTo(b.hashCode());
    }

    @Test
    void newestPicksTheNewerOfTwo() {
        Record a = value(100, "n1");
        Record b = value(200, "n1");
        assertThat(Record.newest(a, b)).isSameAs(b);
        assertThat(Record.newest(b, a)).isSameAs(b);
    }

    @Test
    void compareIsATotalOrderOnAGeneratedSet() {
        Random random = new Random(42);
        List<Record> records = new ArrayList<>();
        String[] writers = {"n1", "n2", "n10", "é", "a"};
        for (int i = 0; i < 60; i++) {
            // Few distinct timestamps and writers, so that every tie-break is exercised.
            long ts = random.nextInt(3);
            String writer = writers[random.nextInt(writers.length)];
            if (random.nextInt(4) == 0) {
                records.add(Record.tombstone(ts, writer));
            } else {
                long expiry = random.nextBoolean() ? Record.NEVER_EXPIRES : 1 + random.nextInt(3);
                records.add(Record.value(ts, writer, new byte[] {(byte) random.nextInt(3)}, expiry));
            }
        }
        records.add(null);

        for (Record a : records) {
            assertThat(compareVersions(a, a)).isZero();
            for (Record b : records) {
                int ab = Integer.signum(compareVersions(a, b));
                int ba = Integer.signum(compareVersions(b, a));
                assertThat(ab).as("antisymmetric: %s vs %s", a, b).isEqualTo(-ba);
                // Total: only versions identical in every field compare equal.
                if (ab == 0) {
                    if (a == null || b == null) {
                        assertThat(a).as("only null equals null").isSameAs(b);
                    } else {
                        assertThat(a.timestamp()).isEqualTo(b.timestamp());
                        assertThat(a.writer()).isEqualTo(b.writer());
                        assertThat(a.tombstone()).isEqualTo(b.tombstone());
                        assertThat(a.expiresAtMillis()).isEqualTo(b.expiresAtMillis());
                        assertThat(a.value()).isEqualTo(b.value());
                    }
                }
                for (Record c : records) {
                    if (compareVersions(a, b) > 0 && compareVersions(b, c) > 0) {
                        assertThat(compareVersions(a, c)).as("transitive: %s > %s > %s", a, b, c).isPositive();
                    }
                    if (compareVersions(a, b) == 0 && compareVersions(b, c) > 0) {
                        assertThat(compareVersions(a, c)).isPositive();
                    }
                }
            }
        }
    }

    @Test
    void mergeOrderDoesNotMatter() {
        Random random = new Random(7);
        List<Record> records = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            records.add(random.nextBoolean() ? Record.tombstone(random.nextInt(4), "n" + random.nextInt(3))
                    : value(random.nextInt(4), "n" + random.nextInt(3)));
        }
        Record forward = null;
        for (Record r : records) {
            forward = Record.newest(forward, r);
        }
        Record backward = null;
        for (int i = records.size() - 1; i >= 0; i--) {
            backward = Record.newest(records.get(i), backward);
        }
        assertThat(forward).isNotNull().isEqualTo(backward);
        for (Record r : records) {
            assertThat(r.isNewerThan(forward)).isFalse();
        }
    }

    @Test
    void expiresExactlyAtItsExpiryTime() {
        Record r = Record.value(100, "n1", V, 1_000);
        assertThat(r.isExpiredAt(999)).isFalse();
        assertThat(r.readsAsAbsentAt(999)).isFalse();
        assertThat(r.isExpiredAt(1_000)).isTrue();
        assertThat(r.readsAsAbsentAt(1_000)).isTrue();
        assertThat(r.isExpiredAt(1_001)).isTrue();
    }

    @Test
    void aRecordWithoutExpiryNeverExpires() {
        Record r = value(100, "n1");
        assertThat(r.isExpiredAt(0)).isFalse();
        assertThat(r.isExpiredAt(Long.MAX_VALUE)).isFalse();
        assertThat(r.readsAsAbsentAt(Long.MAX_VALUE)).isFalse();
    }

    @Test
    void aTombstoneAlwaysReadsAsAbsent() {
        Record t = Record.tombstone(100, "n1");
        assertThat(t.isExpiredAt(Long.MAX_VALUE)).isFalse();
        assertThat(t.readsAsAbsentAt(0)).isTrue();
    }

    @Test
    void emptyValueIsLiveNotAbsent() {
        Record r = Record.value(100, "n1", new byte[0], Record.NEVER_EXPIRES);
        assertThat(r.readsAsAbsentAt(Long.MAX_VALUE)).isFalse();
    }

    @Test
    void constructorRejectsInconsistentRecords() {
        assertThatThrownBy(() -> new Record(1, "n1", true, 0, new byte[] {1}))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Record.value(1, "n1", V, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Record.value(1, null, V, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Record.value(1, "n1", null, 0)).isInstanceOf(NullPointerException.class);
    }
}
