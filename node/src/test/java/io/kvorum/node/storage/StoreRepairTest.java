package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.iq80.leveldb.DB;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store with a damaged table, as a bad disk sector leaves it: reading over the damage fails
 * until {@link StoreRepair} has salvaged the store, which then reads whole, keeps the records of
 * its other tables (the LevelDB of leveldbjni 1.8 sets a damaged table aside whole), and builds
 * its anti-entropy index again from what it kept.
 */
class StoreRepairTest {

    private static final int RECORDS = 30_000;
    private static final int VALUE_BYTES = 1000;

    @TempDir
    Path dataDir;

    private Path records() {
        return dataDir.resolve("records");
    }

    @Test
    void aDamagedTableIsSalvagedAndTheIndexRebuiltFromWhatWasKept() throws IOException {
        writeRecords();
        compactIntoTablesByKeyRange();
        Path damaged = damageTheFirstTable();
        try (LevelDbStore store = LevelDbStore.open(records(), false, 8 << 20, true)) {
            assertThatThrownBy(() -> count(store)).as("the damage is found by a read over it")
                    .isInstanceOf(RuntimeException.class).hasStackTraceContaining("Corruption");
        }

        StoreRepair.Outcome outcome = StoreRepair.repair(dataDir);

        assertThat(outcome.database()).isEqualTo(records());
        assertThat(outcome.records()).as("what the damaged table held is lost, the rest kept")
                .isLessThan(RECORDS).isPositive();
        assertThat(outcome.tablesSetAside()).containsExactly(damaged.getFileName().toString());
        assertThat(records().resolve("lost").resolve(damaged.getFileName())).as("set aside").exists();
        assertThat(damaged).doesNotExist();
        try (LevelDbStore store = LevelDbStore.open(records(), false, 8 << 20, true)) {
            assertThat(count(store)).isEqualTo(outcome.records());
            AtomicLong indexed = new AtomicLong();
            store.forEachIndexed(new int[] {0, 1 << BucketIndex.BUCKET_BITS}, null, e -> indexed.incrementAndGet() >= 0);
            assertThat(indexed.get()).as("one index entry per record kept, none for the lost").isEqualTo(outcome.records());
        }
    }

    /**
     * A lost {@code CURRENT} (the file naming the manifest): LevelDB would open the directory as a
     * new, empty database and delete the old tables as obsolete, so the store refuses to open, and
     * the repair rebuilds the manifest from the tables and logs, every record kept.
     */
    @Test
    void aStoreThatLostItsCurrentIsNotOpenedEmptyAndTheRepairKeepsEveryRecord() throws IOException {
        writeRecords();
        List<String> filesBefore = dataFiles();
        Files.delete(records().resolve("CURRENT"));

        assertThatThrownBy(() -> LevelDbStore.open(records(), false, 8 << 20, true))
                .isInstanceOf(DamagedStoreException.class).hasMessageContaining("no CURRENT");
        assertThat(dataFiles()).as("nothing deleted").containsAll(filesBefore);

        StoreRepair.Outcome outcome = StoreRepair.repair(dataDir);
        assertThat(outcome.records()).isEqualTo(RECORDS);
        assertThat(outcome.tablesSetAside()).isEmpty();
        try (LevelDbStore store = LevelDbStore.open(records(), false, 8 << 20, true)) {
            assertThat(count(store)).isEqualTo(RECORDS);
        }
    }

    @Test
    void aStoreThatLostItsManifestIsRepairedWithEveryRecord() throws IOException {
        writeRecords();
        try (Stream<Path> files = Files.list(records())) {
            for (Path manifest : files.filter(f -> f.getFileName().toString().startsWith("MANIFEST-")).toList()) {
                Files.delete(manifest);
            }
        }
        assertThatThrownBy(() -> LevelDbStore.open(records(), false, 8 << 20, true)).isInstanceOf(IOException.class)
                .hasMessageContaining("MANIFEST");

        assertThat(StoreRepair.repair(dataDir).records()).isEqualTo(RECORDS);
    }

    /**
     * Damage in the middle of the log (not a write torn by a kill): the store refuses to open,
     * rather than drop the acknowledged writes LevelDB would skip, and the repair salvages it,
     * losing only the batch whose bytes were damaged.
     */
    @Test
    void aLogDamagedBeforeItsEndIsRefusedAndTheRepairKeepsAllButTheDamagedBatch() throws IOException {
        writeRecords();
        Path log;
        try (Stream<Path> files = Files.list(records())) {
            log = files.filter(p -> p.toString().endsWith(".log")).max(Comparator.naturalOrder()).orElseThrow();
        }
        try (RandomAccessFile file = new RandomAccessFile(log.toFile(), "rw")) {
            assertThat(file.length()).as("the log holds the writes since the last table").isGreaterThan(1 << 20);
            file.seek(file.length() / 2);
            file.write(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        }

        assertThatThrownBy(() -> LevelDbStore.open(records(), false, 8 << 20, true))
                .isInstanceOf(DamagedStoreException.class).hasMessageContaining("would drop acknowledged writes");

        StoreRepair.Outcome outcome = StoreRepair.repair(dataDir);
        assertThat(outcome.records()).as("every record but those of the damaged batch of 500")
                .isLessThan(RECORDS).isGreaterThanOrEqualTo(RECORDS - 500);
        try (LevelDbStore store = LevelDbStore.open(records(), false, 8 << 20, true)) {
            assertThat(count(store)).isEqualTo(outcome.records());
        }
    }

    /** The names of the store's tables and logs. */
    private List<String> dataFiles() throws IOException {
        try (Stream<Path> files = Files.list(records())) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".sst") || n.endsWith(".log"))
                    .toList();
        }
    }

    @Test
    void aStoreInUseIsNotTouched() throws IOException {
        writeRecords();
        try (LevelDbStore running = LevelDbStore.open(records(), false, 8 << 20, true)) {
            assertThatThrownBy(() -> StoreRepair.repair(dataDir)).isInstanceOf(IOException.class)
                    .hasMessageContaining("lock");
            assertThat(running.get(key(7))).isNotNull();
        }
    }

    @Test
    void aDirectoryWithoutAStoreIsRefused() {
        assertThatThrownBy(() -> StoreRepair.repair(dataDir)).isInstanceOf(IOException.class)
                .hasMessageContaining("no Kvorum store in " + dataDir);
    }

    private static byte[] key(int i) {
        return String.format("key%06d", i).getBytes(StandardCharsets.UTF_8);
    }

    /** 30 MB of incompressible values: LevelDB flushes them into tables of about 2 MB. */
    private void writeRecords() throws IOException {
        Random random = new Random(1);
        try (LevelDbStore store = LevelDbStore.open(records(), false, 8 << 20, true)) {
            List<Mutation> batch = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                byte[] value = new byte[VALUE_BYTES];
                random.nextBytes(value);
                batch.add(new Mutation.Put(key(i), Record.value(i + 1, "n1", value, Record.NEVER_EXPIRES)));
                if (batch.size() == 500) {
                    store.apply(batch);
                    batch.clear();
                }
            }
            store.apply(batch);
        }
    }

    /**
     * A full compaction: the records end up in tables of about 2 MB by key range, and their index
     * entries (whose keys sort after every record's) in tables of their own, as in a store that has
     * run for a while. Before it, a record and its index entry share the table of their memtable.
     */
    private void compactIntoTablesByKeyRange() throws IOException {
        try (DB db = LevelDbOpener.open(records(), 8 << 20, 16 << 20)) {
            db.compactRange(null, null);
        }
    }

    /**
     * 8 KB of noise in the middle of the first table a compaction wrote: it holds the smallest
     * keys, records only, whose index entries are in another table.
     */
    private Path damageTheFirstTable() throws IOException {
        Path table;
        try (Stream<Path> files = Files.list(records())) {
            table = files.filter(p -> p.toString().endsWith(".sst"))
                    .min(Comparator.comparing(p -> p.getFileName().toString())).orElseThrow();
        }
        byte[] noise = new byte[8192];
        new Random(2).nextBytes(noise);
        try (RandomAccessFile file = new RandomAccessFile(table.toFile(), "rw")) {
            file.seek(file.length() / 2);
            file.write(noise);
        }
        return table;
    }

    private static long count(LevelDbStore store) {
        long n = 0;
        try (LevelDbStore.Cursor cursor = store.cursor(new byte[0], null)) {
            for (List<Entry> batch = cursor.next(4096, 4 << 20); !batch.isEmpty(); batch = cursor.next(4096, 4 << 20)) {
                n += batch.size();
            }
        }
        return n;
    }
}
