package io.kvorum.node.antientropy;

import static io.kvorum.node.antientropy.RepairFixture.key;
import static io.kvorum.node.antientropy.RepairFixture.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.Placement;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.LocalEntryStream;
import io.kvorum.node.model.Record;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The storage side of anti-entropy: trees and bucket scans over a real LevelDB, writes of received records. */
@Timeout(60)
class RepairStorageTest {

    private static final int FANOUT_BITS = 2;
    private static final int DEPTH = 3; // 64 leaves

    @TempDir
    Path dir;

    private RepairFixture node;
    private final RepairScope n1n2 = new RepairScope(new Placement(RepairFixture.topology()), 2, "n1", "n2");

    @BeforeEach
    void open() throws Exception {
        node = new RepairFixture(dir, "n1", 2, FANOUT_BITS, DEPTH);
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            Record r = i % 4 == 0 ? Record.tombstone(((long) 1000 + i) << 16, "n2") : value(1000 + i, "n1", "v" + i);
            entries.add(new Entry(key("k" + i), r));
        }
        node.putAll(entries);
    }

    @AfterEach
    void close() throws Exception {
        node.close();
    }

    @Test
    void theTreeCoversExactlyTheKeysBothNodesReplicate() {
        MerkleTree expected = new MerkleTree(FANOUT_BITS, DEPTH);
        int covered = 0;
        for (Map.Entry<String, Record> e : node.dump().entrySet()) {
            if (n1n2.covers(key(e.getKey()))) {
                expected.add(key(e.getKey()), e.getValue());
                covered++;
            }
        }
        expected.seal();

        MerkleTree built = node.repair.buildTree(n1n2, FANOUT_BITS, DEPTH).join();

        // With 3 nodes and RF 2, about a third of the keys live on both n1 and n2.
        assertThat(covered).isBetween(700, 1300);
        assertThat(built.recordCount()).isEqualTo(covered);
        for (int i = 0; i < built.leafCount(); i++) {
            assertThat(built.hash(DEPTH, i)).as("leaf %d", i).isEqualTo(expected.hash(DEPTH, i));
        }
        assertThat(LocalEntryStream.openCursors()).isZero();
    }

    @Test
    void aBucketScanYieldsTheRecordsOfThoseBucketsOnlyTombstonesIncluded() {
        BitSet buckets = new BitSet();
        buckets.set(3);
        buckets.set(17);
        buckets.set(63);
        MerkleTree shape = new MerkleTree(FANOUT_BITS, DEPTH);
        SortedMap<String, Record> expected = new TreeMap<>();
        node.dump().forEach((k, r) -> {
            if (buckets.get(shape.bucketOf(key(k))) && n1n2.covers(key(k))) {
                expected.put(k, r);
            }
        });

        SortedMap<String, Record> scanned = new TreeMap<>();
        try (EntryStream records = node.repair.recordsOf(n1n2, FANOUT_BITS, DEPTH, buckets, Long.MAX_VALUE)) {
            List<Entry> batch;
            while (!(batch = records.next().join()).isEmpty()) {
                batch.forEach(e -> scanned.put(new String(e.key(), StandardCharsets.UTF_8), e.record()));
            }
        }

        assertThat(expected).hasSizeBetween(20, 100);
        assertThat(expected.values()).anyMatch(Record::tombstone);
        assertThat(scanned).isEqualTo(expected);
        assertThat(LocalEntryStream.openCursors()).isZero();
    }

    /**
     * A record written after the round started is not sent (the write may only be in flight), but
     * the other records of its bucket are; every chosen bucket is sent whole but for it, also across
     * batch boundaries.
     */
    @Test
    void aRecordNewerThanTheRoundIsLeftToTheNextRoundButNotTheRestOfItsBucket() {
        List<Entry> more = new ArrayList<>();
        for (int i = 3000; i < 6000; i++) {
            more.add(new Entry(key("k" + i), value(1000 + i, "n1", "v" + i)));
        }
        node.putAll(more); // about 2,000 keys in scope: more than one batch
        MerkleTree shape = new MerkleTree(FANOUT_BITS, DEPTH);
        long roundStart = 10_000L << 16;
        int lateLeaf = shape.bucketOf(key("k0"));
        List<String> leafMates = node.dump().keySet().stream()
                .filter(k -> n1n2.covers(key(k)) && shape.bucketOf(key(k)) == lateLeaf).toList();
        assertThat(leafMates).hasSizeGreaterThan(1);
        String late = leafMates.get(0);
        node.put(late, value(20_000, "n2", "written after the round started"));
        BitSet all = new BitSet();
        all.set(0, shape.leafCount());
        SortedMap<String, Record> expected = new TreeMap<>();
        node.dump().forEach((k, r) -> {
            if (n1n2.covers(key(k)) && !k.equals(late)) {
                expected.put(k, r);
            }
        });

        SortedMap<String, Record> scanned = new TreeMap<>();
        List<Integer> batchSizes = new ArrayList<>();
        try (EntryStream records = node.repair.recordsOf(n1n2, FANOUT_BITS, DEPTH, all, roundStart)) {
            List<Entry> batch;
            while (!(batch = records.next().join()).isEmpty()) {
                batchSizes.add(batch.size());
                batch.forEach(e -> assertThat(scanned.put(new String(e.key(), StandardCharsets.UTF_8), e.record()))
                        .as("each record once").isNull());
            }
        }

        assertThat(batchSizes).hasSizeGreaterThan(1).allMatch(n -> n <= RepairStorage.SCAN_ENTRIES);
        assertThat(scanned).isEqualTo(expected).containsKey(leafMates.get(1));
        assertThat(LocalEntryStream.openCursors()).isZero();
    }

    /** --anti-entropy-rate bounds how fast records are read for an exchange (a lower bound on time, never an upper one). */
    @Test
    void readingRecordsForAnExchangeKeepsToTheRateLimit() throws Exception {
        BitSet all = new BitSet();
        all.set(0, 1 << (FANOUT_BITS * DEPTH));
        int perSecond = 400;
        try (RepairStorage paced = new RepairStorage(node.storage, null,
                new RepairStorage.Pacing(perSecond, 1L << 30, RepairStorage.Pacing.INDEX_ENTRIES_PER_SECOND));
             EntryStream records = paced.recordsOf(n1n2, FANOUT_BITS, DEPTH, all, Long.MAX_VALUE)) {
            long start = System.nanoTime();
            int read = 0;
            List<Entry> batch;
            while (!(batch = records.next().join()).isEmpty()) {
                read += batch.size();
            }
            double seconds = (System.nanoTime() - start) / 1e9;

            // A rate limiter may let one second's worth through at once, never more.
            assertThat(read).isBetween(700, 1300);
            assertThat(seconds).as("%d records at %d/s", read, perSecond)
                    .isGreaterThanOrEqualTo((read - perSecond) / (double) perSecond * 0.95);
        }
    }

    @Test
    void receivedRecordsAreWrittenLastWriteWins() {
        Record older = value(10, "n2", "older");
        Record newer = value(1_000_000, "n2", "newer");
        int applied = node.repair.apply(List.of(new Entry(key("k1"), older), new Entry(key("k2"), newer),
                new Entry(key("fresh"), older))).join();

        assertThat(applied).isEqualTo(2);
        SortedMap<String, Record> stored = node.dump();
        assertThat(stored.get("k1")).isEqualTo(value(1001, "n1", "v1"));
        assertThat(stored.get("k2")).isEqualTo(newer);
        assertThat(stored.get("fresh")).isEqualTo(older);
    }
}
