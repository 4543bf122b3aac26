package io.kvorum.node.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range stream holds no LevelDB iterator between its batches, so that a reader as slow as it
 * likes pins no snapshot: what is written between two batches is seen by the later one.
 */
@Timeout(30)
class LocalEntryStreamTest {

    private static final int KEYS = 10;
    private static final int BATCH = 3;

    @TempDir
    Path dir;
    private StorageService storage;

    @BeforeEach
    void writeKeys() throws Exception {
        storage = new StorageService(LevelDbStore.open(dir, false, 1 << 20), 1, 64);
        for (int i = 0; i < KEYS; i++) {
            storage.write(key(i), value(1, "v" + i)).get(5, TimeUnit.SECONDS);
        }
    }

    @AfterEach
    void close() throws Exception {
        storage.close();
    }

    private static byte[] key(int i) {
        return String.format("k%02d", i).getBytes(UTF_8);
    }

    private static Record value(long timestamp, String v) {
        return Record.value(timestamp << 16, "n1", v.getBytes(UTF_8), Record.NEVER_EXPIRES);
    }

    private LocalEntryStream stream() {
        return new LocalEntryStream(storage, key(0), null, BATCH, 1 << 20);
    }

    private static List<String> keysOf(List<Entry> batch) {
        return batch.stream().map(e -> new String(e.key(), UTF_8)).toList();
    }

    @Test
    void betweenBatchesTheStreamHoldsNoIterator() throws Exception {
        int cursorsBefore = LocalEntryStream.openCursors();
        int streamsBefore = LocalEntryStream.openStreams();
        LocalEntryStream stream = stream();

        assertThat(keysOf(stream.next().get(5, TimeUnit.SECONDS))).containsExactly("k00", "k01", "k02");
        assertThat(LocalEntryStream.openCursors()).as("iterators open while the reader holds the first batch")
                .isEqualTo(cursorsBefore);
        assertThat(LocalEntryStream.openStreams()).as("the stream has not ended").isEqualTo(streamsBefore + 1);

        stream.close();
        assertThat(LocalEntryStream.openStreams()).isEqualTo(streamsBefore);
    }

    @Test
    void writesBetweenBatchesAreSeenByTheNextWithEveryKeyOnceInOrder() throws Exception {
        LocalEntryStream stream = stream();
        assertThat(keysOf(stream.next().get(5, TimeUnit.SECONDS))).containsExactly("k00", "k01", "k02");

        // While the reader is slow: a key past the batch changes, one is added past it, and one
        // is added before it (already passed: not seen).
        storage.write(key(3), value(2, "changed")).get(5, TimeUnit.SECONDS);
        storage.write("k03a".getBytes(UTF_8), value(2, "added")).get(5, TimeUnit.SECONDS);
        storage.write("k00a".getBytes(UTF_8), value(2, "behind")).get(5, TimeUnit.SECONDS);

        List<Entry> second = stream.next().get(5, TimeUnit.SECONDS);
        assertThat(keysOf(second)).containsExactly("k03", "k03a", "k04");
        assertThat(new String(second.get(0).record().value(), UTF_8)).isEqualTo("changed");

        List<String> rest = new ArrayList<>();
        List<Entry> batch;
        while (!(batch = stream.next().get(5, TimeUnit.SECONDS)).isEmpty()) {
            rest.addAll(keysOf(batch));
        }
        assertThat(rest).containsExactly("k05", "k06", "k07", "k08", "k09");
        assertThat(stream.next().get(5, TimeUnit.SECONDS)).as("after its end").isEmpty();
    }
}
