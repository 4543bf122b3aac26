package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.backup.BackupFileReader;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.backup.BackupPart;
import io.kvorum.node.backup.LocalBackups;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.time.Clock;
import io.kvorum.node.util.NodeThreads;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member's part of a backup is one consistent view of its store while writes go on: a writer
 * applies numbered batches, batch g setting every key of group g % GROUPS to g, one atomic LevelDB
 * batch each. The part must then be the store exactly as it was after some batch s: every group
 * holds the last batch up to s that wrote it, whole (no torn batch, no batch from after s), and s
 * is at least the last batch applied before the snapshot was asked for.
 */
@Timeout(60)
class BackupSnapshotTest {

    private static final int GROUPS = 50;
    private static final int KEYS = 10;
    private static final String ID = "20261207-120000-abcdef";

    @TempDir
    Path dir;

    private static byte[] key(int group, int k) {
        return String.format("g%03d-k%02d", group, k).getBytes(StandardCharsets.UTF_8);
    }

    private static void applyBatch(LevelDbStore store, long g) {
        int group = (int) (g % GROUPS);
        List<Mutation> batch = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            batch.add(new Mutation.Put(key(group, k), Record.value(g, "n1",
                    Long.toString(g).getBytes(StandardCharsets.UTF_8), 0)));
        }
        store.apply(batch);
    }

    @Test
    void aPartHoldsExactlyOneViewOfTheStoreWhileWritesGoOn() throws Exception {
        LevelDbStore store = LevelDbStore.open(dir.resolve("records"), false, 1 << 20);
        StorageService storage = new StorageService(store, 1, 1024);
        ScheduledThreadPoolExecutor timer = NodeThreads.scheduled("test-timer", 1);
        Membership m = Membership.first("test", Topology.parse("n1=127.0.0.1:1:2"), 1);
        // 100 records a second: the 500 records take seconds, and the writer runs all that time.
        LocalBackups backups = new LocalBackups("n1", dir.resolve("backups"), storage, () -> m,
                NodeThreads.singleExecutor("backup"), timer, Duration.ofSeconds(30), 100, 1 << 20,
                NodeMetrics.unregistered(), Clock.SYSTEM);
        AtomicLong applied = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        for (long g = 1; g <= GROUPS; g++) {
            applyBatch(store, g);
            applied.set(g);
        }
        Thread writer = new Thread(() -> {
            for (long g = GROUPS + 1; !stop.get(); g++) {
                applyBatch(store, g);
                applied.set(g);
            }
        });
        writer.start();
        try {
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> applied.get() > 3L * GROUPS);
            backups.prepare(ID, List.of("n1")).join();
            long before = applied.get();
            backups.start(ID).join();
            long after = applied.get();
            Awaitility.await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(50))
                    .until(() -> backups.parts().join().get(0).state().equals(BackupPart.DONE));
            long atEnd = applied.get();
            assertThat(atEnd).as("batches applied while the part was written").isGreaterThan(after + GROUPS);

            Path member = dir.resolve("backups").resolve(ID).resolve("n1");
            Map<Integer, List<Long>> groups = new HashMap<>();
            int entries = 0;
            for (BackupManifest.FileEntry f : BackupManifest.verify(member).files()) {
                try (BackupFileReader reader = BackupFileReader.open(member.resolve(f.name()))) {
                    for (Entry e; (e = reader.next()) != null; entries++) {
                        int group = Integer.parseInt(new String(e.key(), StandardCharsets.UTF_8).substring(1, 4));
                        groups.computeIfAbsent(group, x -> new ArrayList<>()).add(e.record().timestamp());
                    }
                }
            }
            assertThat(entries).isEqualTo(GROUPS * KEYS);
            long s = groups.values().stream().flatMap(List::stream).mapToLong(Long::longValue).max().orElseThrow();
            assertThat(s).as("the view's last batch").isBetween(before, after + 1);
            for (int group = 0; group < GROUPS; group++) {
                long expected = s - Math.floorMod(s - group, GROUPS);
                assertThat(groups.get(group)).as("group %d, in the view after batch %d", group, s)
                        .hasSize(KEYS).containsOnly(expected);
            }
            assertThat(BackupManifest.read(member).records()).isEqualTo(GROUPS * KEYS);
        } finally {
            stop.set(true);
            writer.join();
            backups.close();
            timer.shutdownNow();
            storage.close();
        }
    }
}
