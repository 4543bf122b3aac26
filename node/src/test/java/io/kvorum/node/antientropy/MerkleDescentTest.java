package io.kvorum.node.antientropy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.antientropy.AntiEntropyMessage.HashQuery;
import io.kvorum.node.antientropy.MerkleTreeTest.Keyed;
import io.kvorum.node.model.Record;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The walk down two trees, against a simulated peer that answers from its own tree. */
class MerkleDescentTest {

    private static final int FANOUT_BITS = 3;
    private static final int DEPTH = 3;

    /** What a walk asked and found. */
    record Walk(List<HashQuery> queries, int[] differing) {
        int hashesAsked() {
            return queries.stream().mapToInt(q -> q.indices().length).sum();
        }
    }

    static Walk walk(MerkleTree local, MerkleTree remote, int maxIndices) {
        MerkleDescent descent = new MerkleDescent(FANOUT_BITS, DEPTH, maxIndices);
        List<HashQuery> queries = new ArrayList<>();
        HashQuery q;
        while ((q = descent.nextQuery()) != null) {
            queries.add(q);
            long[] answer = new long[q.indices().length];
            for (int i = 0; i < answer.length; i++) {
                answer[i] = remote.hash(q.level(), q.indices()[i]);
            }
            descent.onHashes(local, q.level(), answer);
        }
        assertThat(descent.isFinished()).isTrue();
        return new Walk(queries, descent.differingLeaves());
    }

    @Test
    void identicalTreesCostOneHash() {
        List<Keyed> records = MerkleTreeTest.records(2000);
        Walk w = walk(MerkleTreeTest.tree(records), MerkleTreeTest.tree(records), 4096);
        assertThat(w.queries()).hasSize(1);
        assertThat(w.queries().get(0).level()).isZero();
        assertThat(w.queries().get(0).indices()).containsExactly(0);
        assertThat(w.differing()).isEmpty();
    }

    @ParameterizedTest(name = "{0} changed keys")
    @ValueSource(ints = {1, 5, 40})
    void theWalkFindsExactlyTheDifferingLeaves(int changedKeys) {
        List<Keyed> records = MerkleTreeTest.records(4000);
        List<Keyed> other = new ArrayList<>(records);
        TreeSet<Integer> expected = new TreeSet<>();
        MerkleTree shape = new MerkleTree(FANOUT_BITS, DEPTH);
        for (int i = 0; i < changedKeys; i++) {
            int at = i * 97;
            Keyed k = other.get(at);
            other.set(at, new Keyed(k.key(), Record.tombstone(k.record().timestamp() + 1, "n9")));
            expected.add(shape.bucketOf(k.key()));
        }

        Walk w = walk(MerkleTreeTest.tree(records), MerkleTreeTest.tree(other), 4096);

        assertThat(w.differing()).containsExactly(expected.stream().mapToInt(Integer::intValue).toArray());
        // The root, then at most fanout children per differing node of each level above the leaves.
        assertThat(w.hashesAsked()).isLessThanOrEqualTo(1 + expected.size() * DEPTH * (1 << FANOUT_BITS));
        assertThat(w.queries()).extracting(HashQuery::level).isSorted();
    }

    @Test
    void queriesRespectTheirSizeLimit() {
        List<Keyed> records = MerkleTreeTest.records(3000);
        List<Keyed> other = new ArrayList<>();
        TreeSet<Integer> expected = new TreeSet<>();
        MerkleTree shape = new MerkleTree(FANOUT_BITS, DEPTH);
        for (Keyed k : records) {
            other.add(new Keyed(k.key(), Record.tombstone(k.record().timestamp() + 1, "n9")));
            expected.add(shape.bucketOf(k.key()));
        }
        Walk w = walk(MerkleTreeTest.tree(records), MerkleTreeTest.tree(other), 5);
        assertThat(w.queries()).allSatisfy(q -> assertThat(q.indices().length).isBetween(1, 5));
        assertThat(w.differing()).containsExactly(expected.stream().mapToInt(Integer::intValue).toArray()); // every leaf that holds a key
    }

    @Test
    void anAnswerThatDoesNotFitTheQueryIsAProtocolError() {
        MerkleTree t = MerkleTreeTest.tree(MerkleTreeTest.records(10));
        MerkleDescent descent = new MerkleDescent(FANOUT_BITS, DEPTH, 4096);
        assertThatThrownBy(() -> descent.onHashes(t, 0, new long[1])).isInstanceOf(IllegalArgumentException.class);
        descent.nextQuery();
        assertThatThrownBy(() -> descent.onHashes(t, 0, new long[2])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> descent.onHashes(t, 1, new long[1])).isInstanceOf(IllegalArgumentException.class);
    }
}
