package io.kvorum.node.antientropy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.model.Record;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MerkleTreeTest {

    private static final int FANOUT_BITS = 3;
    private static final int DEPTH = 3; // 512 leaves: a few records per leaf below

    record Keyed(byte[] key, Record record) {
    }

    static List<Keyed> records(int n) {
        List<Keyed> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
            Record r = i % 7 == 0 ? Record.tombstone((1000L + i) << 16, "n" + (i % 3))
                    : Record.value((1000L + i) << 16, "n" + (i % 3), ("v" + i).getBytes(StandardCharsets.UTF_8),
                    i % 5 == 0 ? 5_000_000L + i : Record.NEVER_EXPIRES);
            out.add(new Keyed(key, r));
        }
        return out;
    }

    static MerkleTree tree(List<Keyed> records) {
        MerkleTree t = new MerkleTree(FANOUT_BITS, DEPTH);
        records.forEach(k -> t.add(k.key(), k.record()));
        return t.seal();
    }

    static List<Integer> differingLeaves(MerkleTree a, MerkleTree b) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < a.leafCount(); i++) {
            if (a.hash(a.depth(), i) != b.hash(b.depth(), i)) {
                out.add(i);
            }
        }
        return out;
    }

    @Test
    void theTreeDoesNotDependOnTheOrderOfRecords() {
        List<Keyed> records = records(3000);
        List<Keyed> shuffled = new ArrayList<>(records);
        Collections.shuffle(shuffled, new Random(42));
        MerkleTree inOrder = tree(records);
        MerkleTree outOfOrder = tree(shuffled);

        assertThat(inOrder.recordCount()).isEqualTo(3000);
        for (int level = 0; level <= DEPTH; level++) {
            for (int i = 0; i < inOrder.levelSize(level); i++) {
                assertThat(outOfOrder.hash(level, i)).as("level %d node %d", level, i).isEqualTo(inOrder.hash(level, i));
            }
        }
    }

    /** A changed version of one key changes its leaf, and every node above it, and nothing else. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"timestamp", "writer", "tombstone", "expiry"})
    void aChangedVersionChangesExactlyOneLeaf(String field) {
        List<Keyed> records = records(3000);
        int changed = 1234;
        Keyed k = records.get(changed);
        Record r = k.record();
        UnaryOperator<Record> change = switch (field) {
            case "timestamp" -> x -> new Record(x.timestamp() + 1, x.writer(), x.tombstone(), x.expiresAtMillis(), x.value());
            case "writer" -> x -> new Record(x.timestamp(), x.writer() + "x", x.tombstone(), x.expiresAtMillis(), x.value());
            case "tombstone" -> x -> Record.tombstone(x.timestamp(), x.writer());
            default -> x -> new Record(x.timestamp(), x.writer(), x.tombstone(), 77, x.value());
        };
        List<Keyed> other = new ArrayList<>(records);
        other.set(changed, new Keyed(k.key(), change.apply(r)));

        MerkleTree a = tree(records);
        MerkleTree b = tree(other);

        int bucket = a.bucketOf(k.key());
        assertThat(differingLeaves(a, b)).containsExactly(bucket);
        assertThat(a.hash(0, 0)).isNotEqualTo(b.hash(0, 0));
        assertThat(a.hash(1, bucket >> (FANOUT_BITS * (DEPTH - 1))))
                .isNotEqualTo(b.hash(1, bucket >> (FANOUT_BITS * (DEPTH - 1))));
    }

    @Test
    void aMissingRecordChangesItsLeafOnly() {
        List<Keyed> records = records(500);
        List<Keyed> fewer = new ArrayList<>(records);
        Keyed removed = fewer.remove(17);
        MerkleTree a = tree(records);
        MerkleTree b = tree(fewer);
        assertThat(differingLeaves(a, b)).containsExactly(a.bucketOf(removed.key()));
    }

    @Test
    void identicalTreesOfEmptyAndEqualSetsMatch() {
        assertThat(tree(List.of()).hash(0, 0)).isEqualTo(tree(List.of()).hash(0, 0));
        assertThat(tree(records(10)).hash(0, 0)).isNotEqualTo(tree(List.of()).hash(0, 0));
    }

    @Test
    void bucketsSpreadKeysOverEveryLeaf() {
        MerkleTree t = new MerkleTree(FANOUT_BITS, DEPTH);
        int[] perLeaf = new int[t.leafCount()];
        for (Keyed k : records(51_200)) {
            perLeaf[t.bucketOf(k.key())]++;
        }
        // 100 per leaf on average; a uniform hash keeps every leaf within a wide band of it.
        assertThat(java.util.Arrays.stream(perLeaf).min().orElseThrow()).isGreaterThanOrEqualTo(40);
        assertThat(java.util.Arrays.stream(perLeaf).max().orElseThrow()).isLessThanOrEqualTo(160);
    }

    @Test
    void aTreeIsReadOnlyOnceSealedAndReadableOnlyThen() {
        MerkleTree t = new MerkleTree(FANOUT_BITS, DEPTH);
        assertThatThrownBy(() -> t.hash(0, 0)).isInstanceOf(IllegalStateException.class);
        t.seal();
        assertThatThrownBy(() -> t.add(new byte[] {1}, Record.tombstone(1, "n1"))).isInstanceOf(IllegalStateException.class);
        assertThat(MerkleTree.withDefaultShape().leafCount()).isEqualTo(1 << 20);
        assertThatThrownBy(() -> new MerkleTree(4, 6)).isInstanceOf(IllegalArgumentException.class);
    }
}
