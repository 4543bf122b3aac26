package io.kvorum.node.antientropy;

import static io.kvorum.node.antientropy.RepairFixture.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.storage.StorageTestAccess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trees kept up to date on write are, at every point, the trees a full scan would build from
 * the same records: after random puts, overwrites, deletes, purges and received repairs, and after
 * the store is closed (or its process dies) and opened again.
 */
@Timeout(120)
class MaintainedTreesTest {

    private static final int FANOUT_BITS = 3;
    private static final int DEPTH = 3; // 512 leaves: many keys share a leaf
    private static final Topology TOPOLOGY = RepairFixture.topology();

    @TempDir
    Path dir;

    @Test
    void everyScopeEqualsATreeBuiltFromScratchThroughRandomChanges() throws Exception {
        for (int rf : new int[] {2, 3}) {
            Path storeDir = dir.resolve("rf" + rf);
            Random random = new Random(42 + rf);
            try (StorageService storage = open(storeDir)) {
                MaintainedTrees trees = new MaintainedTrees(storage.store(), "n1", TOPOLOGY, rf, FANOUT_BITS, DEPTH, 1e9);
                for (int round = 0; round < 10; round++) {
                    // Many changes leave every word of leaves dirty; a few leave dirty words with
                    // clean ones between them, each run of them read on its own.
                    applyRandomChanges(storage, random, round % 2 == 0 ? 400 : 1 + random.nextInt(3));
                    assertEqualsFromScratch(trees, storage, rf);
                }
            }
            // Reopened (as after a crash: nothing of the trees is kept), the first refresh rebuilds them.
            try (StorageService storage = open(storeDir)) {
                MaintainedTrees trees = new MaintainedTrees(storage.store(), "n1", TOPOLOGY, rf, FANOUT_BITS, DEPTH, 1e9);
                assertThat(trees.isBuilt()).isFalse();
                assertEqualsFromScratch(trees, storage, rf);
                assertThat(trees.isBuilt()).isTrue();
            }
        }
    }

    /** A node that ran alone (no index kept) and then joins peers gets an index true to its records. */
    @Test
    void aStoreThatChangedWithoutItsIndexGetsItRebuiltWhenOpenedWithIt() throws Exception {
        Random random = new Random(11);
        try (StorageService storage = open(dir)) {
            applyRandomChanges(storage, random, 300);
        }
        try (StorageService storage = new StorageService(LevelDbStore.open(dir, false, 8 << 20, false), 1, 4096)) {
            applyRandomChanges(storage, random, 300); // overwrites and purges the index does not see
        }
        try (StorageService storage = open(dir)) {
            MaintainedTrees trees = new MaintainedTrees(storage.store(), "n1", TOPOLOGY, 3, FANOUT_BITS, DEPTH, 1e9);
            assertEqualsFromScratch(trees, storage, 3);
        }
    }

    @Test
    void aScopeWithNoChangeSinceTheLastRoundIsTheSameSealedTree() throws Exception {
        try (StorageService storage = open(dir)) {
            MaintainedTrees trees = new MaintainedTrees(storage.store(), "n1", TOPOLOGY, 3, FANOUT_BITS, DEPTH, 1e9);
            applyRandomChanges(storage, new Random(7), 200);
            RepairScope withN2 = new RepairScope(new Placement(TOPOLOGY), 3, "n1", "n2");
            RepairScope withN3 = new RepairScope(new Placement(TOPOLOGY), 3, "n1", "n3");

            MerkleTree first = trees.treeFor(withN2);

            // With every key on every node, both peers' scopes are one tree, computed once.
            assertThat(trees.treeFor(withN3)).isSameAs(first);
            storage.write(key("another"), value(2_000_000, "n1", "v")).join();
            MerkleTree afterWrite = trees.treeFor(withN2);
            assertThat(afterWrite).isNotSameAs(first);
            assertThat(afterWrite.hash(0, 0)).isNotEqualTo(first.hash(0, 0));
        }
    }

    private static StorageService open(Path dir) throws Exception {
        return new StorageService(LevelDbStore.open(dir, false, 8 << 20), 1, 4096);
    }

    /** Puts, overwrites with newer and older versions, tombstones, purges and batches of "repairs". */
    private static void applyRandomChanges(StorageService storage, Random random, int count) {
        for (int i = 0; i < count; i++) {
            byte[] key = key("k" + random.nextInt(300));
            long millis = 1000 + random.nextInt(100_000);
            int what = random.nextInt(10);
            if (what < 5) {
                storage.write(key, value(millis, random.nextBoolean() ? "n1" : "n2", "v" + i)).join();
            } else if (what < 7) {
                storage.write(key, Record.tombstone(millis << 16, "n3")).join();
            } else if (what < 9) {
                Record current = storage.read(key).join();
                if (current != null) { // a purge acts only on the exact record stored
                    StorageTestAccess.purge(storage, key, current, random.nextBoolean() ? null
                            : Record.value(current.timestamp(), current.writer(), new byte[0], 1)).join();
                }
            } else { // a batch of records received from a peer, written concurrently
                List<CompletableFuture<Boolean>> repairs = new ArrayList<>();
                for (int j = 0; j < 20; j++) {
                    repairs.add(storage.write(key("k" + random.nextInt(300)),
                            value(1000 + random.nextInt(100_000), "n2", "r" + j)));
                }
                repairs.forEach(CompletableFuture::join);
            }
        }
    }

    private static void assertEqualsFromScratch(MaintainedTrees trees, StorageService storage, int rf) {
        SortedMap<String, Record> stored = dump(storage.store());
        for (String peer : List.of("n2", "n3")) {
            RepairScope scope = new RepairScope(new Placement(TOPOLOGY), rf, "n1", peer);
            MerkleTree expected = new MerkleTree(FANOUT_BITS, DEPTH);
            for (Map.Entry<String, Record> e : stored.entrySet()) {
                if (scope.covers(key(e.getKey()))) {
                    expected.add(key(e.getKey()), e.getValue());
                }
            }
            expected.seal();
            MerkleTree maintained = trees.treeFor(scope);
            assertThat(maintained.recordCount()).as("records with %s, rf %d", peer, rf).isEqualTo(expected.recordCount());
            for (int leaf = 0; leaf < expected.leafCount(); leaf++) {
                assertThat(maintained.hash(DEPTH, leaf)).as("leaf %d with %s, rf %d", leaf, peer, rf)
                        .isEqualTo(expected.hash(DEPTH, leaf));
            }
            assertThat(maintained.hash(0, 0)).isEqualTo(expected.hash(0, 0));
        }
    }

    private static SortedMap<String, Record> dump(LevelDbStore store) {
        SortedMap<String, Record> out = new TreeMap<>();
        try (LevelDbStore.Cursor cursor = store.cursor(new byte[0], null)) {
            for (var batch = cursor.next(1024, 1 << 20); !batch.isEmpty(); batch = cursor.next(1024, 1 << 20)) {
                batch.forEach(e -> out.put(new String(e.key(), StandardCharsets.UTF_8), e.record()));
            }
        }
        return out;
    }

    private static Record value(long millis, String writer, String value) {
        return RepairFixture.value(millis, writer, value);
    }
}
