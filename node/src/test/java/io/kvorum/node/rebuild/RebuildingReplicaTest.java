package io.kvorum.node.rebuild;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** While checking or rebuilding, this node's replica refuses reads, never answering "none"; writes go through. */
class RebuildingReplicaTest {

    @TempDir
    Path dir;

    /** A replica that holds no version of any key and takes every write. */
    private static final Replica EMPTY = new Replica() {
        @Override
        public String nodeId() {
            return "n1";
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            return CompletableFuture.completedFuture(true);
        }
    };

    @Test
    void refusesReadsUntilRebuiltAndTakesWritesThroughout() throws Exception {
        Rebuild rebuild = Rebuild.open("n1", dir, true, true, () -> Set.of("n2"));
        rebuild.answered("n2", "an-earlier-store");
        RebuildingReplica replica = new RebuildingReplica(EMPTY, rebuild);
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);

        assertThat(replica.read(key)).failsWithin(java.time.Duration.ZERO)
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(RebuildingException.class);
        assertThat(replica.readDigest(key)).isCompletedExceptionally();
        assertThat(replica.write(key, null)).isCompletedWithValue(true);

        rebuild.rebuilt();

        assertThat(replica.read(key)).isCompletedWithValue(null);
        assertThat(replica.readDigest(key)).isCompletedWithValue(null);
    }
}
