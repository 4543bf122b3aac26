package io.kvorum.node.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.StorageException;
import io.kvorum.node.storage.StorageOverloadedException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The cluster-wide range merge ({@link MergedEntryStream}, opened through {@link ClusterRangeSource})
 * over in-memory streams whose batches the test scripts: order, one version per key, the newest
 * one, failures before and after the first batch, bounded read-ahead, and close.
 */
@Timeout(30)
class MergedEntryStreamTest {

    private final AtomicLong observedTimestamp = new AtomicLong();

    /** A node's stream: answers each {@code next()} with the next scripted batch or failure, then ends. */
    static final class FakeStream implements EntryStream {
        final Deque<Object> script = new ArrayDeque<>();
        final List<CompletableFuture<List<Entry>>> calls = new ArrayList<>();
        boolean hangs; // next() answers nothing until the test completes the future
        int closes;

        FakeStream batch(Entry... entries) {
            script.add(List.of(entries));
            return this;
        }

        FakeStream failing(RuntimeException e) {
            script.add(e);
            return this;
        }

        FakeStream hanging() {
            hangs = true;
            return this;
        }

        @Override
        @SuppressWarnings("unchecked")
        public synchronized CompletableFuture<List<Entry>> next() {
            CompletableFuture<List<Entry>> f = new CompletableFuture<>();
            calls.add(f);
            if (hangs) {
                return f;
            }
            Object step = script.poll();
            if (step instanceof RuntimeException e) {
                f.completeExceptionally(e);
            } else {
                f.complete(step == null ? List.of() : (List<Entry>) step);
            }
            return f;
        }

        @Override
        public synchronized void close() {
            closes++;
        }
    }

    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Entry value(String key, long ts, String writer, String value) {
        return new Entry(key(key), Record.value(ts, writer, value.getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES));
    }

    private static Entry value(String key, long ts) {
        return value(key, ts, "n1", key + "@" + ts);
    }

    private static Entry tombstone(String key, long ts) {
        return new Entry(key(key), Record.tombstone(ts, "n1"));
    }

    /** The merge of the streams n1, n2, ... with RF = {@code rf}; output batches of at most 3 entries. */
    private EntryStream merge(int rf, FakeStream... streams) {
        Map<String, RangeSource> nodes = new LinkedHashMap<>();
        for (int i = 0; i < streams.length; i++) {
            FakeStream s = streams[i];
            nodes.put("n" + (i + 1), (start, end) -> s);
        }
        List<String> all = List.copyOf(nodes.keySet());
        return new ClusterRangeSource(nodes, key -> all, rf, 3, 1 << 20, observedTimestamp::set).open(key("a"), null);
    }

    private static List<Entry> next(EntryStream stream) throws Exception {
        return stream.next().get(10, TimeUnit.SECONDS);
    }

    private static List<Entry> readAll(EntryStream stream) throws Exception {
        List<Entry> all = new ArrayList<>();
        for (List<Entry> batch = next(stream); !batch.isEmpty(); batch = next(stream)) {
            assertThat(batch.size()).as("an output batch is bounded").isLessThanOrEqualTo(3);
            all.addAll(batch);
        }
        return all;
    }

    private static List<String> keys(List<Entry> entries) {
        return entries.stream().map(e -> new String(e.key(), StandardCharsets.ISO_8859_1)).toList();
    }

    private static Throwable failureOf(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return io.kvorum.node.util.Failures.unwrap(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no answer within 10 s", e);
        }
        throw new AssertionError("expected a failure, got a batch");
    }

    @Test
    void keysComeOnceEachInAscendingUnsignedByteOrderAcrossBatchesAndSources() throws Exception {
        // "\u00ff" is 0xC3 0xBF in UTF-8: after every ASCII key in unsigned order, before it in signed.
        FakeStream n1 = new FakeStream().batch(value("a", 1), value("d", 1)).batch(value("g", 1), value("\u00ff", 1));
        FakeStream n2 = new FakeStream().batch(value("b", 1), value("d", 1), value("e", 1)).batch(value("h", 1));
        FakeStream n3 = new FakeStream().batch(value("a", 1), value("c", 1)).batch(value("e", 1), value("f", 1))
                .batch(value("h", 1), value("\u00ff", 1));

        List<Entry> merged = readAll(merge(3, n1, n2, n3));

        assertThat(merged.stream().map(e -> new String(e.key(), StandardCharsets.UTF_8)).toList())
                .containsExactly("a", "b", "c", "d", "e", "f", "g", "h", "\u00ff");
    }

    @Test
    void theNewestVersionOfAKeyWinsWhicheverNodeHoldsIt() throws Exception {
        FakeStream n1 = new FakeStream().batch(value("k1", 5), value("k2", 3), value("k3", 7, "n1", "n1-wins-tie"));
        FakeStream n2 = new FakeStream().batch(value("k1", 9), value("k2", 1), value("k3", 7, "n0", "n0-loses-tie"));
        FakeStream n3 = new FakeStream().batch(value("k2", 2));

        List<Entry> merged = readAll(merge(3, n1, n2, n3));

        assertThat(keys(merged)).containsExactly("k1", "k2", "k3");
        assertThat(merged.get(0).record().timestamp()).isEqualTo(9);
        assertThat(merged.get(1).record().timestamp()).isEqualTo(3);
        assertThat(new String(merged.get(2).record().value(), StandardCharsets.UTF_8)).isEqualTo("n1-wins-tie");
        assertThat(observedTimestamp.get()).as("the HLC saw the versions returned").isEqualTo(7);
    }

    @Test
    void aNewerTombstoneHidesAnOlderValueAndAnOlderOneDoesNot() throws Exception {
        FakeStream n1 = new FakeStream().batch(value("deleted", 1), tombstone("rewritten", 1));
        FakeStream n2 = new FakeStream().batch(tombstone("deleted", 2), value("rewritten", 2));

        List<Entry> merged = readAll(merge(2, n1, n2));

        // The merge keeps tombstones (the coordinator's live filter drops them): what matters is that
        // the tombstone, not the older value, is the version of "deleted".
        assertThat(keys(merged)).containsExactly("deleted", "rewritten");
        assertThat(merged.get(0).record().tombstone()).isTrue();
        assertThat(merged.get(1).record().tombstone()).isFalse();
        assertThat(merged.get(1).record().timestamp()).isEqualTo(2);
    }

    @Test
    void eachNodeIsAskedForItsNextBatchOnlyWhenItsCurrentOneIsUsedUp() throws Exception {
        FakeStream n1 = new FakeStream().batch(value("a", 1), value("b", 1), value("c", 1), value("d", 1))
                .batch(value("x", 1));
        FakeStream n2 = new FakeStream().batch(value("y", 1)).batch(value("z", 1));
        EntryStream merged = merge(2, n1, n2);

        assertThat(keys(next(merged))).containsExactly("a", "b", "c"); // the output batch is full
        assertThat(n1.calls).hasSize(1);
        assertThat(n2.calls).hasSize(1);
        assertThat(keys(next(merged))).containsExactly("d"); // n1's batch is used up; "x" is not known yet
        assertThat(n1.calls).hasSize(1);
        assertThat(keys(next(merged))).containsExactly("x");
        assertThat(n1.calls).as("n1's next batch, asked once its first was merged").hasSize(2);
        assertThat(n2.calls).as("n2 still has 'y' buffered").hasSize(1);
        assertThat(keys(readAll(merged))).containsExactly("y", "z");
    }

    @Test
    void fewerThanRfNodesFailingTheirFirstBatchStillStreamsEveryKeyOfTheOthers() throws Exception {
        FakeStream down = new FakeStream().failing(new ReplicaUnavailableException("n1 is unreachable"));
        FakeStream n2 = new FakeStream().batch(value("a", 1), value("c", 1));
        FakeStream n3 = new FakeStream().batch(value("a", 1), value("b", 1));

        EntryStream merged = merge(2, down, n2, n3);

        assertThat(keys(readAll(merged))).containsExactly("a", "b", "c");
        assertThat(down.calls).as("a failed node is not asked again").hasSize(1);
        assertThat(down.closes).isPositive();
    }

    @Test
    void rfNodesFailingTheirFirstBatchIsNotEnoughReplicasAndClosesEveryStream() throws Exception {
        FakeStream n1 = new FakeStream().failing(new ReplicaUnavailableException("n1 is unreachable"));
        FakeStream n2 = new FakeStream().batch(value("a", 1));
        FakeStream n3 = new FakeStream().failing(new ReplicaUnavailableException("n3 timed out"));

        Throwable failure = failureOf(merge(2, n1, n2, n3).next());

        assertThat(failure).isInstanceOf(NotEnoughReplicasException.class).hasMessageContaining("n1")
                .hasMessageContaining("n3");
        assertThat(List.of(n1.closes, n2.closes, n3.closes)).allMatch(c -> c > 0);
    }

    @Test
    void everyNodeRefusingForOverloadIsOverloadNotMissingReplicas() throws Exception {
        FakeStream n1 = new FakeStream().failing(new StorageOverloadedException("read queue full"));
        FakeStream n2 = new FakeStream().failing(new ReplicaUnavailableException("n2 is unreachable"));

        assertThat(failureOf(merge(2, n1, n2).next())).isInstanceOf(OverloadedException.class);
    }

    @Test
    void aNodeFailingAfterItsFirstBatchFailsTheStreamAndClosesEveryStream() throws Exception {
        FakeStream n1 = new FakeStream().batch(value("a", 1)).failing(new ReplicaUnavailableException("n1 died"));
        FakeStream n2 = new FakeStream().batch(value("b", 1), value("c", 1));
        FakeStream n3 = new FakeStream().batch(value("b", 1));
        EntryStream merged = merge(3, n1, n2, n3);

        assertThat(keys(next(merged))).containsExactly("a");
        Throwable failure = failureOf(merged.next());

        assertThat(failure).isInstanceOf(NotEnoughReplicasException.class).hasMessageContaining("n1 died");
        assertThat(List.of(n1.closes, n2.closes, n3.closes)).allMatch(c -> c > 0);
    }

    @Test
    void closeReachesEveryStreamEvenWithABatchInFlight() throws Exception {
        FakeStream n1 = new FakeStream().batch(value("a", 1));
        FakeStream slow = new FakeStream().hanging();
        EntryStream merged = merge(2, n1, slow);

        CompletableFuture<List<Entry>> inFlight = merged.next();
        assertThat(slow.calls).hasSize(1);
        merged.close();
        merged.close();

        assertThat(n1.closes).isEqualTo(1);
        assertThat(slow.closes).isEqualTo(1);
        slow.calls.get(0).complete(List.of(value("b", 1))); // arrives after close: not delivered
        assertThat(failureOf(inFlight)).isInstanceOf(java.util.concurrent.CancellationException.class);
    }

    @Test
    void aSingleNodeClusterReadsItsOwnStreamAndItsStoresFailureIsA504() throws Exception {
        FakeStream only = new FakeStream().batch(value("a", 1)).failing(new StorageException("records read failed: Corruption", new java.io.IOException("Corruption")));
        Map<String, RangeSource> nodes = Map.of("n1", (start, end) -> only);
        EntryStream range = new ClusterRangeSource(nodes, key -> List.of("n1"), 1, 3, 1 << 20, ts -> { }).open(key("a"), null);

        assertThat(keys(next(range))).containsExactly("a");
        assertThat(failureOf(range.next())).isInstanceOf(NotEnoughReplicasException.class)
                .hasMessage("this node's store failed the range: records read failed: Corruption");
        range.close();
        assertThat(only.closes).isEqualTo(1);
    }

    @Test
    void onlyTheKeysReplicasCountSoAStaleCopyElsewhereCannotBringADeletedKeyBack() throws Exception {
        // n3 kept "b" and "c" from before it stopped replicating them; their replicas n1 and n2 deleted
        // "c" and purged its tombstone since. "d" is n3's own, with n1.
        FakeStream n1 = new FakeStream().batch(value("a", 5), value("b", 7), value("d", 2));
        FakeStream n2 = new FakeStream().batch(value("a", 5), value("b", 7));
        FakeStream n3 = new FakeStream().batch(value("b", 9), value("c", 3), value("d", 4));
        Map<String, RangeSource> nodes = new LinkedHashMap<>();
        nodes.put("n1", (start, end) -> n1);
        nodes.put("n2", (start, end) -> n2);
        nodes.put("n3", (start, end) -> n3);
        Map<String, List<String>> replicas = Map.of("a", List.of("n1", "n2"), "b", List.of("n1", "n2"),
                "c", List.of("n1", "n2"), "d", List.of("n1", "n3"));
        EntryStream merged = new ClusterRangeSource(nodes, key -> replicas.get(new String(key, StandardCharsets.UTF_8)),
                2, 3, 1 << 20, ts -> { }).open(key("a"), null);

        List<Entry> read = readAll(merged);
        assertThat(keys(read)).containsExactly("a", "b", "d");
        assertThat(read.get(1).record().timestamp()).as("n3's newer copy of b is not a replica's").isEqualTo(7);
        assertThat(read.get(2).record().timestamp()).as("n3 replicates d").isEqualTo(4);
    }

    @Test
    void theReplicasOfAKeyAreTheFirstOfItsOrderingAmongTheReaders() throws Exception {
        Topology three = Topology.parse(
                "n1=127.0.0.1:1:2,n2=127.0.0.1:3:4,n3=127.0.0.1:5:6");
        byte[] k = key("some key");
        List<String> expected = new Placement(three).replicasFor(k, 2).stream()
                .map(ClusterMember::id).toList();
        assertThat(ClusterRangeSource.replicasUnder(three, 2).apply(k)).hasSize(2).isEqualTo(expected);
        assertThat(ClusterRangeSource.replicasUnder(three, 5).apply(k)).as("never more than the readers").hasSize(3);
    }

    @Test
    void anEmptyRangeEndsAtOnce() throws Exception {
        EntryStream merged = merge(2, new FakeStream(), new FakeStream());

        assertThat(next(merged)).isEmpty();
        assertThat(next(merged)).as("and stays ended").isEmpty();
    }
}
