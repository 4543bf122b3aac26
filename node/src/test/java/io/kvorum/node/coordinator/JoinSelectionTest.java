package io.kvorum.node.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.Rendezvous;
import io.kvorum.node.coordinator.JoinSelection.Part;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class JoinSelectionTest {

    private static final List<String> CURRENT = List.of("n1", "n2", "n3");
    private static final List<String> COMING = List.of("n1", "n2", "n3", "n4");

    private static JoinSelection of(String source, Set<String> passedOver, Part part) {
        return new JoinSelection(CURRENT, COMING, 3, "n4", source, passedOver, part);
    }

    private static byte[] key(int i) {
        return ("k" + i).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void eachKeyTheNewNodeGainsIsChosenFromExactlyOneSourceAndDigestedByTheOthers() {
        int gained = 0;
        for (int i = 0; i < 2000; i++) {
            byte[] k = key(i);
            boolean gains = Rendezvous.over(COMING).replicas(k, 3).contains("n4");
            int chosen = 0;
            int digested = 0;
            for (String source : CURRENT) {
                chosen += of(source, Set.of(), Part.CHOSEN).selects(k) ? 1 : 0;
                digested += of(source, Set.of(), Part.DIGESTS).selects(k) ? 1 : 0;
            }
            assertThat(chosen).as("sources of k%d", i).isEqualTo(gains ? 1 : 0);
            assertThat(digested).as("digests of k%d", i).isEqualTo(gains ? 2 : 0);
            if (gains) {
                gained++;
                assertThat(of("n1", Set.of(), Part.CHOSEN).chosenSource(k))
                        .isEqualTo(Rendezvous.over(CURRENT).replicas(k, 1).get(0));
            }
        }
        assertThat(gained).as("about three keys in four").isBetween(1300, 1700);
    }

    @Test
    void theKeysOfASourcePassedOverAreChosenFromTheirNextReplica() {
        for (int i = 0; i < 500; i++) {
            byte[] k = key(i);
            List<String> order = Rendezvous.over(CURRENT).replicas(k, 3);
            String next = order.get(0).equals("n2") ? order.get(1) : order.get(0);
            assertThat(of("n1", Set.of("n2"), Part.CHOSEN).chosenSource(k)).isEqualTo(next);
        }
        assertThat(of("n1", Set.of("n1", "n2", "n3"), Part.CHOSEN).chosenSource(key(1))).isNull();
    }

    @Test
    void aSelectionFromAPeerIsChecked() {
        assertThatThrownBy(() -> new JoinSelection(List.of(), COMING, 3, "n4", "n1", Set.of(), Part.CHOSEN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new JoinSelection(List.of("n1", "n1"), COMING, 3, "n4", "n1", Set.of(), Part.CHOSEN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new JoinSelection(CURRENT, COMING, 0, "n4", "n1", Set.of(), Part.CHOSEN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new JoinSelection(CURRENT, COMING, 3, "n5", "n1", Set.of(), Part.CHOSEN))
                .as("a taker that is not coming").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new JoinSelection(CURRENT, COMING, 3, "n4", "n4", Set.of(), Part.CHOSEN))
                .as("a source that is not current").isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new JoinSelection(List.of("n1", "bad id\n"), COMING, 3, "n4", "n1", Set.of(), Part.CHOSEN))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStreamPassesOnOnlyTheSelectedEntriesSkippingBatchesWithNoneAndDigestsValues() throws Exception {
        JoinSelection digests = of("n1", Set.of(), Part.DIGESTS);
        List<List<Entry>> batches = new ArrayList<>();
        List<Entry> selected = new ArrayList<>();
        int i = 0;
        for (int b = 0; b < 50; b++) { // batches of one entry: many hold nothing selected
            byte[] k = key(i++);
            Entry e = new Entry(k, b % 5 == 0 ? Record.tombstone(10 + b, "n1")
                    : Record.value(10 + b, "n1", ("value " + b).getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES));
            batches.add(List.of(e));
            if (digests.selects(k)) {
                selected.add(e);
            }
        }
        assertThat(selected).isNotEmpty().hasSizeLessThan(50);
        EntryStream stream = digests.select(new ListStream(batches));

        List<Entry> out = new ArrayList<>();
        for (List<Entry> batch = stream.next().get(5, TimeUnit.SECONDS); !batch.isEmpty();
             batch = stream.next().get(5, TimeUnit.SECONDS)) {
            out.addAll(batch);
        }

        assertThat(out).extracting(Entry::key).containsExactlyElementsOf(selected.stream().map(Entry::key).toList());
        for (int j = 0; j < out.size(); j++) {
            Record sent = out.get(j).record();
            Record stored = selected.get(j).record();
            assertThat(JoinSelection.digestOf(sent)).isEqualTo(RecordDigest.of(stored));
            if (stored.tombstone()) {
                assertThat(sent).as("a tombstone goes whole").isEqualTo(stored);
            } else {
                assertThat(sent.value()).as("a value goes as its hash").hasSize(RecordDigest.HASH_BYTES);
            }
        }
    }

    /** Batches completed at once, then the end. */
    private static final class ListStream implements EntryStream {
        private final List<List<Entry>> batches;
        private int next;

        ListStream(List<List<Entry>> batches) {
            this.batches = batches;
        }

        @Override
        public java.util.concurrent.CompletableFuture<List<Entry>> next() {
            return java.util.concurrent.CompletableFuture.completedFuture(next < batches.size() ? batches.get(next++) : List.of());
        }

        @Override
        public void close() {
        }
    }
}
