package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.Mutation.Purge;
import io.kvorum.node.storage.Mutation.Put;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.iq80.leveldb.DB;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LevelDbStoreTest {

    @TempDir
    Path dir;

    private LevelDbStore store;

    @BeforeEach
    void open() throws IOException {
        store = LevelDbStore.open(dir, false, 1 << 20);
    }

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Record value(long ts, String value) {
        return Record.value(ts, "n1", value.getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES);
    }

    private boolean put(byte[] key, Record r) {
        return store.apply(List.of(new Put(key, r)))[0];
    }

    private static List<String> keys(List<Entry> entries) {
        return entries.stream().map(e -> new String(e.key(), StandardCharsets.UTF_8)).toList();
    }

    private List<Entry> readAll(byte[] start, byte[] end) {
        List<Entry> all = new ArrayList<>();
        try (LevelDbStore.Cursor cursor = store.cursor(start, end)) {
            List<Entry> batch;
            while (!(batch = cursor.next(100, 1 << 20)).isEmpty()) {
                all.addAll(batch);
            }
        }
        return all;
    }

    @Test
    void getOfAMissingKeyIsNull() {
        assertThat(store.get(key("nothing"))).isNull();
    }

    @Test
    void putStoresARecordAndGetReadsItBack() {
        Record r = value(10, "v");
        assertThat(put(key("k"), r)).isTrue();
        assertThat(store.get(key("k"))).isEqualTo(r);
        assertThat(store.get(key("k")).value()).isEqualTo(key("v"));
    }

    @Test
    void applyKeepsOnlyNewerRecords() {
        assertThat(put(key("k"), value(10, "ten"))).isTrue();

        // state: k = ten@10
        assertThat(put(key("k"), value(9, "nine"))).as("older").isFalse();
        assertThat(store.get(key("k")).value()).isEqualTo(key("ten"));

        assertThat(put(key("k"), value(10, "ten"))).as("the same version again").isFalse();

        assertThat(put(key("k"), value(11, "eleven"))).as("newer").isTrue();
        assertThat(store.get(key("k")).value()).isEqualTo(key("eleven"));

        // state: k = eleven@11; a tombstone of the same timestamp and writer wins the tie
        assertThat(put(key("k"), Record.tombstone(11, "n1"))).isTrue();
        assertThat(store.get(key("k")).tombstone()).isTrue();

        assertThat(put(key("k"), value(11, "eleven"))).as("value under its own tombstone").isFalse();
        assertThat(store.get(key("k")).tombstone()).isTrue();
    }

    @Test
    void theSameKeyTwiceInOneBatchKeepsTheNewer() {
        boolean[] applied = store.apply(List.of(
                new Put(key("k"), value(20, "new")),
                new Put(key("k"), value(10, "old"))));
        assertThat(applied).containsExactly(true, false);
        assertThat(store.get(key("k")).value()).isEqualTo(key("new"));

        applied = store.apply(List.of(
                new Put(key("j"), value(10, "old")),
                new Put(key("j"), value(20, "new"))));
        assertThat(applied).containsExactly(true, true);
        assertThat(store.get(key("j")).value()).isEqualTo(key("new"));
    }

    @Test
    void aBatchSeesTheStoredRecordForEachKey() {
        put(key("k"), value(50, "stored"));
        boolean[] applied = store.apply(List.of(
                new Put(key("k"), value(40, "older")),
                new Put(key("other"), value(1, "x")),
                new Put(key("k"), value(60, "newer"))));
        assertThat(applied).containsExactly(false, true, true);
        assertThat(store.get(key("k")).value()).isEqualTo(key("newer"));
        assertThat(store.get(key("other")).value()).isEqualTo(key("x"));
    }

    @Test
    void purgeReplacesOnlyTheExpectedRecord() {
        Record expired = Record.value(10, "n1", key("v"), 1_000);
        put(key("k"), expired);
        Record tombstone = Record.tombstone(10, "n1");

        // state: k = expired; purge expecting some other version does nothing
        assertThat(store.apply(List.of(new Purge(key("k"), value(10, "v"), tombstone)))).containsExactly(false);
        assertThat(store.get(key("k"))).isEqualTo(expired);

        assertThat(store.apply(List.of(new Purge(key("k"), expired, tombstone)))).containsExactly(true);
        assertThat(store.get(key("k"))).isEqualTo(tombstone);
    }

    @Test
    void purgeWithNoReplacementDeletesTheKey() {
        Record tombstone = Record.tombstone(10, "n1");
        put(key("k"), tombstone);
        assertThat(store.apply(List.of(new Purge(key("k"), tombstone, null)))).containsExactly(true);
        assertThat(store.get(key("k"))).isNull();
        // Nothing stored any more: a second purge has nothing to act on.
        assertThat(store.apply(List.of(new Purge(key("k"), tombstone, null)))).containsExactly(false);
    }

    @Test
    void purgeOfAMissingKeyDoesNothing() {
        assertThat(store.apply(List.of(new Purge(key("k"), Record.tombstone(1, "n1"), null)))).containsExactly(false);
        assertThat(store.get(key("k"))).isNull();
    }

    @Test
    void purgeAfterANewerWriteDoesNotLoseTheWrite() {
        Record tombstone = Record.tombstone(10, "n1");
        put(key("k"), tombstone);
        Record rewritten = value(20, "again");
        put(key("k"), rewritten);
        assertThat(store.apply(List.of(new Purge(key("k"), tombstone, null)))).containsExactly(false);
        assertThat(store.get(key("k"))).isEqualTo(rewritten);
    }

    @Test
    void aBatchSeesItsOwnPurge() {
        Record tombstone = Record.tombstone(10, "n1");
        put(key("k"), tombstone);
        boolean[] applied = store.apply(List.of(
                new Purge(key("k"), tombstone, null),
                new Put(key("k"), value(5, "older than the purged tombstone")),
                new Purge(key("k"), tombstone, null)));
        // The put lands on an empty key (the tombstone is gone), so the second purge finds another record.
        assertThat(applied).containsExactly(true, true, false);
        assertThat(store.get(key("k")).value()).isEqualTo(key("older than the purged tombstone"));
    }

    @Test
    void cursorStartIsInclusiveAndEndExclusive() {
        for (String k : List.of("a", "b", "c", "d", "e")) {
            put(key(k), value(1, k));
        }
        assertThat(keys(readAll(key("b"), key("d")))).containsExactly("b", "c");
        assertThat(keys(readAll(key("bb"), key("dd")))).containsExactly("c", "d");
        assertThat(keys(readAll(key("a"), key("b")))).containsExactly("a");
    }

    @Test
    void cursorWithoutEndRunsToTheLastKey() {
        for (String k : List.of("a", "b", "c")) {
            put(key(k), value(1, k));
        }
        assertThat(keys(readAll(key("b"), null))).containsExactly("b", "c");
        assertThat(keys(readAll(new byte[0], null))).containsExactly("a", "b", "c");
    }

    @Test
    void cursorWithEndAtOrBeforeStartIsEmpty() {
        for (String k : List.of("a", "b", "c")) {
            put(key(k), value(1, k));
        }
        assertThat(readAll(key("b"), key("b"))).isEmpty();
        assertThat(readAll(key("c"), key("a"))).isEmpty();
    }

    @Test
    void cursorOrdersKeysAsUnsignedBytes() {
        byte[] k00 = {0x00};
        byte[] k7f = {0x7f};
        byte[] k80 = {(byte) 0x80};
        byte[] kfe = {(byte) 0xfe}; // 0xFF starts the store's own keys (BucketIndex)
        byte[] kfeff = {(byte) 0xfe, (byte) 0xff};
        for (byte[] k : List.of(kfe, k00, kfeff, k80, k7f)) {
            put(k, value(1, "x"));
        }
        List<Entry> all = readAll(new byte[0], null);
        assertThat(all).extracting(Entry::key).containsExactly(k00, k7f, k80, kfe, kfeff);

        // An end of 0x80 excludes 0x80 and above, which a signed order would put first.
        assertThat(readAll(new byte[0], k80)).extracting(Entry::key).containsExactly(k00, k7f);
        assertThat(readAll(k80, null)).extracting(Entry::key).containsExactly(k80, kfe, kfeff);
        assertThat(readAll(k7f, kfe)).extracting(Entry::key).containsExactly(k7f, k80);
    }

    @Test
    void keysReservedForTheIndexAreNeverStoredAndCursorsNeverShowTheIndex() {
        byte[] reserved = {(byte) 0xff, 0x01, 0, 0, 0};
        assertThat(store.apply(List.of(new Put(reserved, value(1, "x"))))).containsExactly(false);
        assertThat(store.get(reserved)).isNull();
        put(key("a"), value(1, "a"));

        assertThat(readAll(new byte[0], null)).extracting(Entry::key).containsExactly(key("a"));
        assertThat(readAll(new byte[] {(byte) 0xfe}, new byte[] {(byte) 0xff, (byte) 0xff})).isEmpty();
    }

    @Test
    void cursorReturnsTombstonesAndExpiredRecordsToo() {
        put(key("a"), Record.tombstone(1, "n1"));
        put(key("b"), Record.value(1, "n1", key("v"), 1));
        assertThat(readAll(new byte[0], null)).extracting(Entry::record)
                .containsExactly(Record.tombstone(1, "n1"), Record.value(1, "n1", key("v"), 1));
    }

    @Test
    void cursorBatchesAreLimitedByEntries() {
        for (int i = 0; i < 10; i++) {
            put(key("k" + i), value(1, "v"));
        }
        try (LevelDbStore.Cursor cursor = store.cursor(new byte[0], null)) {
            assertThat(keys(cursor.next(4, 1 << 20))).containsExactly("k0", "k1", "k2", "k3");
            assertThat(keys(cursor.next(4, 1 << 20))).containsExactly("k4", "k5", "k6", "k7");
            assertThat(keys(cursor.next(4, 1 << 20))).containsExactly("k8", "k9");
            assertThat(cursor.next(4, 1 << 20)).isEmpty();
            assertThat(cursor.next(4, 1 << 20)).as("stays at the end").isEmpty();
        }
    }

    @Test
    void cursorBatchesAreLimitedByBytes() {
        byte[] value = new byte[1000];
        for (int i = 0; i < 10; i++) {
            put(key("k" + i), Record.value(1, "n1", value, Record.NEVER_EXPIRES));
        }
        int entryBytes = key("k0").length + RecordCodec.encode(Record.value(1, "n1", value, 0)).length;

        try (LevelDbStore.Cursor cursor = store.cursor(new byte[0], null)) {
            // A batch always makes progress, even when one entry is larger than the limit.
            assertThat(keys(cursor.next(100, 1))).containsExactly("k0");
            // It stops once the entries taken reach the limit, so at most one entry goes past it.
            assertThat(keys(cursor.next(100, 2 * entryBytes))).containsExactly("k1", "k2");
            assertThat(keys(cursor.next(100, 2 * entryBytes + 1))).containsExactly("k3", "k4", "k5");
            // The entry limit still applies under a generous byte limit.
            assertThat(keys(cursor.next(3, 1 << 20))).containsExactly("k6", "k7", "k8");
            assertThat(keys(cursor.next(100, 1 << 20))).containsExactly("k9");
            assertThat(cursor.next(100, 1 << 20)).isEmpty();
        }
    }

    @Test
    void cursorReadsASnapshot() {
        put(key("a"), value(1, "old"));
        put(key("c"), value(1, "c"));
        try (LevelDbStore.Cursor cursor = store.cursor(new byte[0], null)) {
            put(key("a"), value(2, "new"));
            put(key("b"), value(1, "b"));
            List<Entry> all = cursor.next(100, 1 << 20);
            assertThat(keys(all)).containsExactly("a", "c");
            assertThat(all.get(0).record().value()).isEqualTo(key("old"));
        }
    }

    @Test
    void aClosedCursorReturnsNothing() {
        put(key("a"), value(1, "a"));
        LevelDbStore.Cursor cursor = store.cursor(new byte[0], null);
        cursor.close();
        assertThat(cursor.next(10, 1 << 20)).isEmpty();
        cursor.close(); // idempotent
    }

    @Test
    void aCursorStillOpenWhenTheStoreClosesFailsInsteadOfReadingFreedMemory() throws IOException {
        for (int i = 0; i < 10; i++) {
            put(key("k" + i), value(i + 1, "v"));
        }
        LevelDbStore.Cursor cursor = store.cursor(new byte[0], null);
        assertThat(cursor.next(2, 1 << 20)).hasSize(2);
        store.close();
        assertThatThrownBy(() -> cursor.next(2, 1 << 20)).isInstanceOf(StorageException.class)
                .hasMessageContaining("after close");
        assertThatThrownBy(() -> store.get(key("k1"))).isInstanceOf(StorageException.class);
        assertThatThrownBy(() -> store.cursor(new byte[0], null)).isInstanceOf(StorageException.class);
        cursor.close(); // closed by the store already: nothing to do
        store.close(); // idempotent
        store = null;
    }

    @Test
    void reopeningTheStoreKeepsTheData() throws IOException {
        Record live = Record.value(5, "n2", new byte[] {0, (byte) 0xff}, 123_456);
        Record tombstone = Record.tombstone(6, "n1");
        put(key("live"), live);
        put(key("dead"), tombstone);
        store.close();
        store = null;

        store = LevelDbStore.open(dir, true, 1 << 20);
        assertThat(store.get(key("live"))).isEqualTo(live);
        assertThat(store.get(key("dead"))).isEqualTo(tombstone);
        assertThat(keys(readAll(new byte[0], null))).containsExactly("dead", "live");
    }

    @Test
    void applyOfAnEmptyBatchChangesNothing() {
        put(key("a"), value(1, "a"));
        List<Mutation> none = List.of();
        assertThat(store.apply(none)).isEmpty();
        assertThat(keys(readAll(new byte[0], null))).containsExactly("a");
    }

    // The writer skips the read of a key when a put is above every stored timestamp, and a restarted
    // node starts its clock past them (StoredTimestampCeiling). These check the ceiling however the
    // store was opened: above every stored timestamp, within its headroom of the newest; and that an
    // older put is still refused.

    @Test
    void anOlderPutIsRefusedAfterReopening() throws IOException {
        put(key("k"), value(1_000, "new"));
        reopen();
        assertThat(put(key("k"), value(500, "old"))).isFalse();
        assertThat(store.get(key("k"))).isEqualTo(value(1_000, "new"));
        assertThat(put(key("k"), value(1_001, "newer"))).isTrue();
    }

    @Test
    void theCeilingCoversTheNewestStoredTimestampAfterReopeningWithinItsHeadroom() throws IOException {
        assertThat(store.timestampCeilingAtOpen()).as("an empty store").isZero();
        put(key("a"), value(7_000, "a"));
        put(key("k"), value(9_000, "new"));
        put(key("k"), value(8_000, "refused: older"));
        store.apply(List.of(new Purge(key("a"), value(7_000, "a"), null)));
        long later = 9_000 + 2 * StoredTimestampCeiling.HEADROOM; // past what the first writes kept
        put(key("b"), value(later, "b"));
        reopen();
        assertThat(store.timestampCeilingAtOpen()).isBetween(later, later + StoredTimestampCeiling.HEADROOM);
        assertThat(put(key("b"), value(later - 1, "old"))).isFalse();
    }

    @Test
    void theCeilingSurvivesACrash(@TempDir Path crashed) throws IOException {
        put(key("a"), value(7_000, "a"));
        put(key("k"), value(9_000, "new"));
        // A copy of the directory of an open store is what a process killed at this point leaves:
        // the batches are in LevelDB's log, not yet in a table, and nothing was closed.
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.copy(f, crashed.resolve(f.getFileName()));
            }
        }
        try (LevelDbStore recovered = LevelDbStore.open(crashed, false, 1 << 20)) {
            assertThat(recovered.timestampCeilingAtOpen()).isBetween(9_000L, 9_000 + StoredTimestampCeiling.HEADROOM);
            assertThat(recovered.apply(List.of(new Put(key("k"), value(8_999, "old"))))[0]).isFalse();
        }
    }

    @Test
    void aStoreThatKeptNoCeilingIsScannedOnceAndTheOldBoundFileRemoved() throws IOException {
        put(key("a"), value(7_000, "a"));
        put(key("k"), value(9_000, "new"));
        store.close();
        store = null;
        withRawDatabase(StoredTimestampCeiling::forget); // as a store written by an older version
        Files.writeString(dir.resolve(StoredTimestampCeiling.LEGACY_FILE_NAME), "123\n");

        store = LevelDbStore.open(dir, false, 1 << 20);
        assertThat(store.timestampCeilingAtOpen()).as("from a scan of the store").isEqualTo(9_000);
        assertThat(put(key("k"), value(8_999, "old"))).isFalse();
        assertThat(dir.resolve(StoredTimestampCeiling.LEGACY_FILE_NAME)).doesNotExist();
        store.close();
        store = null;
        withRawDatabase(db -> assertThat(db.get(StoredTimestampCeiling.KEY)).as("kept again").hasSize(Long.BYTES));
    }

    @Test
    void anUnreadableCeilingIsReplacedByAScan() throws IOException {
        put(key("k"), value(9_000, "new"));
        store.close();
        store = null;
        withRawDatabase(db -> db.put(StoredTimestampCeiling.KEY, key("garbage")));
        store = LevelDbStore.open(dir, false, 1 << 20);
        assertThat(store.timestampCeilingAtOpen()).isEqualTo(9_000);
        assertThat(put(key("k"), value(8_999, "old"))).isFalse();
    }

    @Test
    void noWriteReachesTheKeyThatHoldsTheCeiling() throws IOException {
        put(key("k"), value(9_000, "new"));
        assertThat(put(StoredTimestampCeiling.KEY, value(1, "x"))).isFalse();
        reopen();
        assertThat(store.timestampCeilingAtOpen()).isBetween(9_000L, 9_000 + StoredTimestampCeiling.HEADROOM);
    }

    private void withRawDatabase(Consumer<DB> action) throws IOException {
        try (DB db = LevelDbOpener.open(dir, 1 << 20, 1 << 20)) {
            action.accept(db);
        }
    }

    @Test
    void aPutWithTheNewestTimestampIsDecidedByTheWriterTieBreak() {
        Record stored = Record.value(100, "n2", key("stored"), Record.NEVER_EXPIRES);
        put(key("k"), stored);
        assertThat(put(key("k"), Record.value(100, "n1", key("lower writer"), Record.NEVER_EXPIRES))).isFalse();
        assertThat(store.get(key("k"))).isEqualTo(stored);
        assertThat(put(key("k"), Record.value(100, "n3", key("higher writer"), Record.NEVER_EXPIRES))).isTrue();
    }

    @Test
    void withinABatchAnOlderPutOfAKeyLosesToANewerOneAboveTheBound() {
        List<Mutation> batch = List.of(new Put(key("k"), value(50_000, "newer")), new Put(key("k"), value(40_000, "older")));
        assertThat(store.apply(batch)).containsExactly(true, false);
        assertThat(store.get(key("k"))).isEqualTo(value(50_000, "newer"));
    }

    private void reopen() throws IOException {
        store.close();
        store = null;
        store = LevelDbStore.open(dir, false, 1 << 20);
    }
}
