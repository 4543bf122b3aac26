package io.kvorum.node.admin;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.backup.BackupFileWriter;
import io.kvorum.node.backup.BackupFileWriterAccess;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.cluster.MiniCluster;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.model.Record;
import io.kvorum.node.time.HybridLogicalClock;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvorum restore} driven in this JVM against real clusters (docs/operations.md#restore):
 * verification before anything is written, a round trip into clusters of other sizes than the
 * backup's, newer writes kept, idempotence, and a resumed run.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RestoreCommandTest {

    @TempDir
    Path tmp;

    private record Run(int exit, List<String> out, List<String> err) {
        String lastOut() {
            return out.isEmpty() ? null : out.get(out.size() - 1);
        }
    }

    /** A record stamped {@code agoMillis} before now by {@code writer}. */
    private static Record value(String writer, long agoMillis, String value, long expiresAt) {
        return Record.value(HybridLogicalClock.pack(System.currentTimeMillis() - agoMillis, 0), writer,
                value.getBytes(UTF_8), expiresAt);
    }

    private static Record tombstone(String writer, long agoMillis) {
        return Record.tombstone(HybridLogicalClock.pack(System.currentTimeMillis() - agoMillis, 0), writer);
    }

    /** Writes one member folder of backup {@code dir}, as a member would: files, then the manifest. */
    /** The id every test backup's manifests name (folders may be named otherwise: a restore reads the manifests). */
    static final String BACKUP_ID = "20261207-000000-000000";

    static void writeMember(Path dir, String node, Map<String, Record> records, long fileBytes) throws IOException {
        Path memberDir = dir.resolve(node);
        List<BackupManifest.FileEntry> files;
        try (BackupFileWriter writer = fileBytes > 0 ? BackupFileWriterAccess.withFileBytes(memberDir, fileBytes)
                : new BackupFileWriter(memberDir)) {
            for (Map.Entry<String, Record> e : new TreeMap<>(records).entrySet()) {
                writer.write(e.getKey().getBytes(UTF_8), e.getValue());
            }
            files = writer.finish();
        }
        Instant now = Instant.now();
        BackupManifest.of(BACKUP_ID, node, "kvorum", now, now,
                new BackupManifest.Membership(1, List.of(new ClusterView.Member(node, "127.0.0.1", 8080, 9080, "normal"))),
                files).writeTo(memberDir);
    }

    private static Run restore(Path dir, MiniCluster c, String... more) {
        List<String> args = new ArrayList<>(List.of(dir.toString(), c.httpUri("n1").toString(), "--rate", "100000"));
        args.addAll(List.of(more));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = RestoreCommand.run(args, new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8),
                false, System::nanoTime);
        return new Run(exit, out.toString(UTF_8).lines().toList(), err.toString(UTF_8).lines().toList());
    }

    private static Optional<String> read(MiniCluster c, String id, String key) throws IOException {
        return c.client(id).sync().get(key).map(v -> new String(v, UTF_8));
    }

    /**
     * A backup of a 3-node cluster whose members disagree: n1 missed a delete and an overwrite
     * that n2 and n3 hold; one value expires soon, one has expired.
     */
    private Map<String, Map<String, Record>> divergentBackup(long expiresAt) {
        Map<String, Map<String, Record>> members = new LinkedHashMap<>();
        Map<String, Record> n1 = new TreeMap<>();
        Map<String, Record> n2 = new TreeMap<>();
        Map<String, Record> n3 = new TreeMap<>();
        for (int i = 0; i < 300; i++) {
            Record r = value("n" + (1 + i % 3), 60_000, "v" + i, Record.NEVER_EXPIRES);
            n1.put("k" + i, r);
            n2.put("k" + i, r);
            n3.put("k" + i, r);
        }
        n1.put("deleted", value("n1", 50_000, "gone", Record.NEVER_EXPIRES));
        n2.put("deleted", tombstone("n2", 40_000));
        n3.put("deleted", tombstone("n2", 40_000));
        n1.put("overwritten", value("n1", 50_000, "first", Record.NEVER_EXPIRES));
        n3.put("overwritten", value("n3", 30_000, "second", Record.NEVER_EXPIRES));
        n2.put("expiring", value("n2", 20_000, "soon", expiresAt));
        n3.put("expiring", value("n2", 20_000, "soon", expiresAt));
        n1.put("expired", value("n1", 20_000, "late", System.currentTimeMillis() - 1000));
        members.put("n1", n1);
        members.put("n2", n2);
        members.put("n3", n3);
        return members;
    }

    private Path writeBackup(String name, Map<String, Map<String, Record>> members, long fileBytes) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        for (Map.Entry<String, Map<String, Record>> m : members.entrySet()) {
            writeMember(dir, m.getKey(), m.getValue(), fileBytes);
        }
        return dir;
    }

    @Test
    void roundTripIntoATwoNodeCluster() throws Exception {
        roundTrip(2, Map.of());
    }

    @Test
    void roundTripIntoAFiveNodeClusterWithReplicationFactorThree() throws Exception {
        roundTrip(5, Map.of(NodeOption.REPLICATION_FACTOR, "3"));
    }

    /** Every value reads back, deletes stay deleted, expiry is kept; a second run changes nothing. */
    private void roundTrip(int nodes, Map<NodeOption, String> options) throws Exception {
        MiniCluster.runWithNewCluster(nodes, options, c -> {
            // Written once the cluster is up, so that the expiry is still ahead when the restore is done.
            long expiresAt = System.currentTimeMillis() + 30_000;
            // Small files: several per member, so batches and files both have boundaries.
            Path dir = writeBackup("b", divergentBackup(expiresAt), 4096);
            try (var files = Files.list(dir.resolve("n1"))) {
                assertThat(files.filter(p -> p.toString().endsWith(".gz")).count()).isGreaterThan(1);
            }
            Run first = restore(dir, c);
            assertThat(first.exit()).as("stderr: %s", first.err()).isZero();
            assertThat(first.lastOut()).as("each key once: 300 keys, deleted, overwritten, expiring, expired")
                    .isEqualTo(Long.toString(300 + 4));
            assertThat(Files.exists(dir.resolve(RestoreCommand.PROGRESS_FILE))).as("progress file left").isFalse();
            assertThat(read(c, "n1", "expiring")).contains("soon");
            assertThat(read(c, "n1", "expired")).isEmpty();
            for (String id : c.ids()) {
                for (int i = 0; i < 300; i += 7) {
                    assertThat(read(c, id, "k" + i)).as("k%d via %s", i, id).contains("v" + i);
                }
            }
            assertThat(read(c, "n2", "k299")).contains("v299");
            assertThat(read(c, "n1", "deleted")).as("a delete stays deleted").isEmpty();
            assertThat(read(c, "n1", "overwritten")).contains("second");

            Run second = restore(dir, c);
            assertThat(second.exit()).as("stderr: %s", second.err()).isZero();
            assertThat(read(c, "n1", "deleted")).isEmpty();
            assertThat(read(c, "n1", "overwritten")).contains("second");
            assertThat(read(c, "n2", "k42")).contains("v42");

            // The expiry came along: the value disappears when the backup said it would.
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> read(c, "n1", "expiring").isEmpty());
            assertThat(System.currentTimeMillis()).isGreaterThanOrEqualTo(expiresAt);
        });
    }

    @Test
    void keepsWritesNewerThanTheBackup() throws Exception {
        Path dir = writeBackup("b", divergentBackup(Record.NEVER_EXPIRES), 0);
        MiniCluster.runWithNewCluster(3, Map.of(), c -> {
            c.client("n1").sync().put("k1", "newer".getBytes(UTF_8));
            c.client("n2").sync().delete("k2");
            c.client("n3").sync().put("deleted", "back again".getBytes(UTF_8));

            Run run = restore(dir, c);
            assertThat(run.exit()).as("stderr: %s", run.err()).isZero();
            assertThat(read(c, "n2", "k1")).contains("newer");
            assertThat(read(c, "n3", "k2")).as("a newer delete").isEmpty();
            assertThat(read(c, "n1", "deleted")).contains("back again");
            assertThat(read(c, "n1", "k3")).contains("v3");
        });
    }

    @Test
    void refusesAMissingOrDamagedFileBeforeWritingAnything() throws Exception {
        Map<String, Map<String, Record>> members = divergentBackup(Record.NEVER_EXPIRES);
        MiniCluster.runWithNewCluster(2, Map.of(), c -> {
            // Each damage is in the last member folder, so that loading the first before checking it would show.
            Path flipped = writeBackup("flipped", members, 0);
            Path flippedFile = flipped.resolve("n3").resolve(BackupFileWriter.fileName(0));
            byte[] bytes = Files.readAllBytes(flippedFile);
            bytes[bytes.length / 2] ^= 0x01;
            Files.write(flippedFile, bytes);
            assertRefused(restore(flipped, c), flippedFile);

            Path truncated = writeBackup("truncated", members, 0);
            Path truncatedFile = truncated.resolve("n3").resolve(BackupFileWriter.fileName(0));
            byte[] whole = Files.readAllBytes(truncatedFile);
            Files.write(truncatedFile, java.util.Arrays.copyOf(whole, whole.length - 20));
            assertRefused(restore(truncated, c), truncatedFile);

            Path missing = writeBackup("missing", members, 4096);
            Path missingFile = missing.resolve("n3").resolve(BackupFileWriter.fileName(1));
            Files.delete(missingFile);
            assertRefused(restore(missing, c), missingFile);

            Path noManifest = writeBackup("nomanifest", members, 0);
            Path manifest = noManifest.resolve("n3").resolve(BackupManifest.FILE_NAME);
            Files.delete(manifest);
            assertRefused(restore(noManifest, c), manifest);

            for (String key : List.of("k0", "k1", "k150", "k299", "deleted", "overwritten")) {
                for (String id : c.ids()) {
                    assertThat(read(c, id, key)).as("%s via %s: nothing was written", key, id).isEmpty();
                }
            }
        });
    }

    private static void assertRefused(Run run, Path file) {
        assertThat(run.exit()).as("exit; stderr: %s", run.err()).isEqualTo(RestoreCommand.EXIT_BAD);
        assertThat(run.err()).hasSize(1);
        assertThat(run.err().get(0)).contains(file.toString());
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aRerunSkipsTheKeysAnInterruptedRunLoaded() throws Exception {
        Map<String, Map<String, Record>> members = new LinkedHashMap<>();
        TreeMap<String, Record> first = new TreeMap<>();
        for (int i = 0; i < RestoreCommand.BATCH_RECORDS + 100; i++) {
            first.put("a" + i, value("n1", 10_000, "a" + i, Record.NEVER_EXPIRES));
        }
        members.put("n1", first);
        // The second member's only key is longer than a node takes (over 1024 bytes) and sorts after
        // every "a" key: the first batch is taken, the second (the last 100 "a" keys and it) refused.
        Map<String, Record> broken = new TreeMap<>();
        broken.put("b".repeat(2000), value("n2", 10_000, "too long a key", Record.NEVER_EXPIRES));
        members.put("n2", broken);
        Path dir = writeBackup("b", members, 0);
        List<String> keys = new ArrayList<>(first.keySet());
        String lastOfFirstBatch = keys.get(RestoreCommand.BATCH_RECORDS - 1);
        MiniCluster.runWithNewCluster(2, Map.of(), c -> {
            Run interrupted = restore(dir, c);
            assertThat(interrupted.exit()).as("stderr: %s", interrupted.err()).isEqualTo(RestoreCommand.EXIT_FAILED);
            assertThat(interrupted.err().get(interrupted.err().size() - 1)).contains("400");
            assertThat(Files.readAllLines(dir.resolve(RestoreCommand.PROGRESS_FILE)))
                    .endsWith(RestoreCommand.THROUGH + HexFormat.of().formatHex(lastOfFirstBatch.getBytes(UTF_8)));
            assertThat(read(c, "n2", keys.get(0))).contains(keys.get(0));
            assertThat(read(c, "n2", keys.get(keys.size() - 1))).as("in the refused batch").isEmpty();

            // The operator replaces the second member's folder with a good one and runs it again.
            Map<String, Record> fixed = new TreeMap<>();
            for (int i = 0; i < 10; i++) {
                fixed.put("b" + i, value("n2", 10_000, "b" + i, Record.NEVER_EXPIRES));
            }
            try (var files = Files.list(dir.resolve("n2"))) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            writeMember(dir, "n2", fixed, 0);
            Run resumed = restore(dir, c);
            assertThat(resumed.exit()).as("stderr: %s", resumed.err()).isZero();
            assertThat(resumed.lastOut()).as("only the keys after the first batch were loaded").isEqualTo("110");
            assertThat(resumed.err()).anySatisfy(l -> assertThat(l).contains("skipping"));
            assertThat(read(c, "n1", keys.get(keys.size() - 1))).contains(keys.get(keys.size() - 1));
            assertThat(read(c, "n1", "b3")).contains("b3");
            assertThat(Files.exists(dir.resolve(RestoreCommand.PROGRESS_FILE))).isFalse();
        });
    }
}
