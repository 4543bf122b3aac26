package io.kvorum.node.storage;

import static io.kvorum.node.storage.StoredTimestampCeiling.HEADROOM;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.WriteBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@link StoredTimestampCeiling} adds to the batches it is given, including after a failed write. */
class StoredTimestampCeilingTest {

    @TempDir
    Path dir;

    private DB db;
    private StoredTimestampCeiling ceiling;

    @BeforeEach
    void open() throws IOException {
        db = LevelDbOpener.open(dir, 1 << 20, 1 << 20);
        ceiling = StoredTimestampCeiling.open(db, dir, () -> 0);
    }

    @AfterEach
    void close() throws IOException {
        db.close();
    }

    @Test
    void aBatchPastTheKeptCeilingRaisesItByTheHeadroomAndTheNextOnesWithinItAddNothing() {
        assertThat(keptBy(1_000, true)).isEqualTo(1_000 + HEADROOM);
        assertThat(keptBy(1_000 + HEADROOM / 2, true)).as("within the ceiling kept").isNull();
        assertThat(keptBy(1_000 + HEADROOM, true)).isNull();
        assertThat(keptBy(1_001 + HEADROOM, true)).isEqualTo(1_001 + 2 * HEADROOM);
        assertThat(ceiling.newest()).as("exact in memory").isEqualTo(1_001 + HEADROOM);
    }

    @Test
    void afterAFailedBatchTheNextOneKeepsACeilingOverTheFailedOnesTimestamps() {
        keptBy(1_000, true);
        assertThat(keptBy(5 * HEADROOM, false)).isEqualTo(5 * HEADROOM + HEADROOM);
        // The failed batch may have reached the log: the next batch, however old, covers it.
        assertThat(keptBy(2_000, true)).isEqualTo(5 * HEADROOM + HEADROOM);
        assertThat(keptBy(3_000, true)).isNull();
    }

    @Test
    void aBatchOfNoPutsAddsNothing() {
        assertThat(keptBy(0, true)).isNull();
    }

    /** Runs one batch through the ceiling; returns the ceiling it added to the batch, or null. */
    private Long keptBy(long batchNewest, boolean written) {
        RecordingBatch batch = new RecordingBatch();
        ceiling.addTo(batch, batchNewest);
        ceiling.afterWrite(batchNewest, written);
        assertThat(batch.puts).hasSizeLessThanOrEqualTo(1);
        if (batch.puts.isEmpty()) {
            return null;
        }
        assertThat(batch.puts.get(0)[0]).isEqualTo(StoredTimestampCeiling.KEY);
        return ByteBuffer.wrap(batch.puts.get(0)[1]).getLong();
    }

    private static final class RecordingBatch implements WriteBatch {
        final List<byte[][]> puts = new ArrayList<>();

        @Override
        public WriteBatch put(byte[] key, byte[] value) {
            puts.add(new byte[][] {Arrays.copyOf(key, key.length), value});
            return this;
        }

        @Override
        public WriteBatch delete(byte[] key) {
            throw new AssertionError("the ceiling is never deleted by a batch");
        }

        @Override
        public void close() {
        }
    }
}
