package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.BlockingKvorumClient;
import io.kvorum.client.KvorumClient;
import io.kvorum.client.RangeReader;
import io.kvorum.node.backup.BackupFileReader;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.model.Entry;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Readiness;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#backup-and-restore with node processes: a backup of a 3-node cluster taken
 * under a writer (puts, deletes, puts with a {@code ttl}) and loaded with {@code kvorum-node.jar
 * restore DIR URL}, as an operator runs it, into a new 2-node and a new 5-node cluster (RF 3).
 * Every write and delete acknowledged before {@code POST /v0/backup} was sent reads back as it was,
 * expired values stay gone and values with a {@code ttl} expire when they would have; restoring
 * again changes nothing; restoring into the cluster that took the backup keeps what was written
 * there since; a member killed while it writes its part makes the backup {@code failed}.
 *
 * <p>Before the writer starts, n3 is stopped while keys {@code stale/*} are deleted or overwritten
 * (hints and anti-entropy are off), so n3's part of the backup holds their older versions, and
 * n3's folder is the last one the restore loads: only the records' own timestamps make the newer
 * versions of n1's and n2's folders win.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BackupRestoreIT {

    private static final Duration BOUND = Duration.ofSeconds(60);
    /** Writes acknowledged before the backup: enough for a part that takes seconds at the 5-node cluster's pace. */
    private static final int OPS_BEFORE_BACKUP = 1200;
    private static final int STALE_KEYS = 40;
    /** Expired before any restore. */
    private static final Duration SHORT_TTL = Duration.ofMillis(1500);
    /** Alive while the new clusters are checked, expired before the test ends. */
    private static final Duration LONG_TTL = Duration.ofSeconds(90);
    /** The 5-node cluster's backups: about 700 records a member at 100 a second, so a kill lands mid-way. */
    private static final String SLOW_BACKUP_RATE = "100";

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private final Http http = new Http();
    private final long startedNanos = System.nanoTime();
    private final List<KvorumClient> clients = new ArrayList<>();

    @AfterEach
    void closeClients() {
        clients.forEach(KvorumClient::close);
    }

    /** One operation of the writer, as it was answered; {@code value} null for a delete. */
    private record Op(int seq, String key, byte[] value, Duration ttl, long sentAtMillis, long answeredAtMillis,
                      boolean acknowledged) {
    }

    @Test
    void aBackupUnderWritesRestoresIntoClustersOfAnySizeAndAKillMidwayFailsIt() throws Exception {
        Path backups = tmp.resolve("backups");
        ProcessCluster original = new ProcessCluster(nodes, tmp.resolve("original"), 3, "--backup-dir", backups.toString(),
                "--anti-entropy-interval", "0", "--hint-max-age", "0");
        startServing(original);
        step("the original cluster serves");
        Map<String, Optional<byte[]>> stale = staleReplicaOnN3(original);
        step("n3 holds older versions of stale/*");
        // Each cluster takes its free ports just before it starts: ports picked long before may be
        // taken meanwhile as the local end of some connection.
        ProcessCluster two = new ProcessCluster(nodes, tmp.resolve("two"), 2);
        startServing(two);
        ProcessCluster five = new ProcessCluster(nodes, tmp.resolve("five"), 5, "--replication-factor", "3",
                "--anti-entropy-rate", SLOW_BACKUP_RATE);
        startServing(five);

        step("the new clusters serve");
        KvorumClient writerClient = client(original, 0);
        Writer writer = new Writer(writerClient.sync(), 54);
        writer.start();
        Await.until(OPS_BEFORE_BACKUP + " writes answered", BOUND, () -> writer.completed.get() >= OPS_BEFORE_BACKUP,
                original::describe);
        int boundary = writer.completed.get(); // every op before this one was answered before the POST was sent
        step("writes before the backup answered");
        String id = startBackup(original, 1);
        step("backup " + id + " started");
        awaitBackup(original, 2, id, "done");
        step("backup " + id + " done");
        writer.stop();
        assertStaleVersionsInN3sPart(backups.resolve(id).resolve("n3"));

        Map<String, Optional<byte[]>> expected = new HashMap<>(stale);
        List<Op> ttlOps = new ArrayList<>();
        expectedAt(writer.ops, boundary, expected, ttlOps);
        assertThat(expected.values().stream().filter(Optional::isEmpty).count()).as("deletes checked").isPositive();

        Path backup = backups.resolve(id);
        assertThat(restore(two, backup, "restore-into-2")).isPositive();
        assertRestored("the 2-node cluster", two, expected, ttlOps);
        assertThat(restore(five, backup, "restore-into-5")).isPositive();
        assertRestored("the 5-node cluster", five, expected, ttlOps);

        step("restored into the 2- and 5-node clusters and checked");
        Map<String, String> once = contents(two);
        restore(two, backup, "restore-into-2-again");
        assertThat(contents(two)).as("the 2-node cluster's keys after restoring the same backup again").isEqualTo(once);

        step("restored into the 2-node cluster again");
        Map<String, Optional<byte[]>> newer = newerWrites(original, expected);
        Map<String, String> before = contents(original);
        restore(original, backup, "restore-into-original");
        assertThat(read(original, newer.keySet())).as("writes made after the backup, read after restoring it")
                .isEqualTo(newer.entrySet().stream().collect(TreeMap::new, (m, e) -> m.put(e.getKey(), show(e.getValue())),
                        Map::putAll));
        assertThat(contents(original)).as("the original cluster's keys after restoring its own backup").isEqualTo(before);

        step("restored into the original cluster");
        killedMidwayFails(five);

        step("a kill mid-way failed a backup");
        for (ProcessCluster c : List.of(two, five)) {
            assertExpireOnTime(c, ttlOps);
        }
    }

    /** One cluster at a time: ten JVMs starting at once on two cores take longer than the readiness bound. */
    private static void startServing(ProcessCluster c) {
        c.startAllReady();
        for (int i = 0; i < c.size(); i++) {
            Readiness.awaitServing("node " + (i + 1), URI.create(loopbackUri(c.http(i)) + "/v0/status"),
                    NodeJvm.READY_TIMEOUT, c::describe);
        }
    }

    /**
     * Writes {@code stale/*} to all three replicas, then with n3 stopped deletes the even ones and
     * overwrites the odd ones; hints and anti-entropy are off, so n3 keeps the older versions.
     */
    private Map<String, Optional<byte[]>> staleReplicaOnN3(ProcessCluster c) throws IOException {
        KvorumClient client = client(c, 0);
        awaitAllReplicasAnswer(client, c);
        for (int i = 0; i < STALE_KEYS; i++) {
            client.sync().put(staleKey(i), ("old-" + i).getBytes(StandardCharsets.UTF_8), KvorumClient.Options.quorum(3, 3));
        }
        c.stop(2);
        Map<String, Optional<byte[]>> expected = new HashMap<>();
        for (int i = 0; i < STALE_KEYS; i++) {
            if (i % 2 == 0) {
                client.sync().delete(staleKey(i));
                expected.put(staleKey(i), Optional.empty());
            } else {
                byte[] value = ("new-" + i).getBytes(StandardCharsets.UTF_8);
                client.sync().put(staleKey(i), value);
                expected.put(staleKey(i), Optional.of(value));
            }
        }
        c.startReady(2);
        awaitAllReplicasAnswer(client, c);
        return expected;
    }

    private static String staleKey(int i) {
        return String.format("stale/%03d", i);
    }

    /** Every peer must see the others up first: until then a write to all three may answer 504. */
    private static void awaitAllReplicasAnswer(KvorumClient client, ProcessCluster c) {
        Await.until("a PUT to all three replicas to answer", BOUND, () -> {
            try {
                client.sync().put("probe", new byte[] {1}, KvorumClient.Options.quorum(3, 3));
                return true;
            } catch (IOException | RuntimeException e) {
                return false;
            }
        }, c::describe);
    }

    /** n3's part holds the version of each {@code stale/*} key from before it was stopped. */
    private static void assertStaleVersionsInN3sPart(Path part) throws IOException {
        Map<String, Boolean> tombstones = new TreeMap<>();
        for (BackupManifest.FileEntry f : BackupManifest.verify(part).files()) {
            try (BackupFileReader reader = BackupFileReader.open(part.resolve(f.name()))) {
                for (Entry e; (e = reader.next()) != null; ) {
                    String key = new String(e.key(), StandardCharsets.UTF_8);
                    if (key.startsWith("stale/")) {
                        tombstones.put(key, e.record().tombstone());
                    }
                }
            }
        }
        assertThat(tombstones).as("stale/* keys in n3's part (each an older value, no tombstone)")
                .hasSize(STALE_KEYS).doesNotContainValue(true);
    }

    /**
     * What a restore of a backup taken at {@code boundary} must give: the last answer of each key
     * all of whose operations were answered before it, successfully. Values with a ttl go to
     * {@code ttlOps}.
     */
    private static void expectedAt(List<Op> ops, int boundary, Map<String, Optional<byte[]>> expected, List<Op> ttlOps) {
        Map<String, Op> last = new HashMap<>();
        Set<String> unsure = new HashSet<>();
        for (Op op : ops) {
            if (op.seq < boundary && op.acknowledged) {
                last.put(op.key, op);
            } else {
                unsure.add(op.key);
            }
        }
        last.keySet().removeAll(unsure);
        last.values().forEach(op -> {
            if (op.ttl != null) {
                ttlOps.add(op);
            } else {
                expected.put(op.key, Optional.ofNullable(op.value));
            }
        });
    }

    /**
     * Runs {@code java -jar kvorum-node.jar restore DIR URL} against the cluster's first node and
     * waits for it to exit 0.
     *
     * @return the number of records it says it loaded (the last line of its stdout)
     */
    private long restore(ProcessCluster target, Path backup, String name) {
        NodeJvm p = nodes.launch(name).args("restore", backup.toString(), loopbackUri(target.http(0)).toString()).start();
        assertThat(p.awaitExit(BOUND)).as("exit status of %s\n%s", name, p.describe()).isZero();
        String[] lines = p.stdout().strip().split("\n");
        return Long.parseLong(lines[lines.length - 1].strip());
    }

    /**
     * Every key of {@code expected} reads back as expected; each value written with a short ttl
     * is gone, and each with a long one is there while its ttl has not passed.
     */
    private void assertRestored(String what, ProcessCluster c, Map<String, Optional<byte[]>> expected, List<Op> ttlOps) {
        KvorumClient client = client(c, c.size() - 1);
        Map<String, Optional<byte[]>> read = WriteLoad.readAll(client, expected.keySet(), 32, BOUND);
        List<String> wrong = new ArrayList<>();
        expected.forEach((key, value) -> {
            Optional<byte[]> got = read.get(key);
            if (value.isEmpty() != got.isEmpty() || value.isPresent() && !Arrays.equals(value.get(), got.get())) {
                wrong.add(key + ": expected " + show(value) + ", read " + show(got));
            }
        });
        assertThat(wrong).as("keys of %s that do not read back as acknowledged before the backup", what).isEmpty();

        long start = System.currentTimeMillis();
        Map<String, Optional<byte[]>> ttlRead = WriteLoad.readAll(client, ttlOps.stream().map(Op::key).toList(), 32, BOUND);
        long end = System.currentTimeMillis();
        int expired = 0;
        int alive = 0;
        for (Op op : ttlOps) {
            Optional<byte[]> got = ttlRead.get(op.key);
            if (start > op.answeredAtMillis + op.ttl.toMillis()) {
                expired++;
                if (got.isPresent()) {
                    wrong.add(op.key + ": its ttl of " + op.ttl.toMillis() + " ms passed, yet it reads back");
                }
            } else if (end < op.sentAtMillis + op.ttl.toMillis()) {
                alive++;
                if (got.isEmpty() || !Arrays.equals(got.get(), op.value)) {
                    wrong.add(op.key + ": within its ttl, read " + show(got));
                }
            }
        }
        assertThat(wrong).as("values with a ttl in %s", what).isEmpty();
        assertThat(expired).as("values checked in %s whose short ttl had passed", what).isPositive();
        assertThat(alive).as("values checked in %s within their long ttl", what).isPositive();
    }

    /** After the backup: overwrites some keys it holds and deletes others; returns what they must read. */
    private Map<String, Optional<byte[]>> newerWrites(ProcessCluster c, Map<String, Optional<byte[]>> backedUp)
            throws IOException {
        KvorumClient client = client(c, 1);
        List<String> present = backedUp.entrySet().stream().filter(e -> e.getValue().isPresent()).map(Map.Entry::getKey)
                .sorted().limit(100).toList();
        List<String> deleted = backedUp.entrySet().stream().filter(e -> e.getValue().isEmpty()).map(Map.Entry::getKey)
                .sorted().limit(20).toList();
        Map<String, Optional<byte[]>> newer = new HashMap<>();
        for (int i = 0; i < present.size(); i++) {
            String key = present.get(i);
            if (i % 2 == 0) {
                client.sync().delete(key);
                newer.put(key, Optional.empty());
            } else {
                byte[] value = ("after the backup " + i).getBytes(StandardCharsets.UTF_8);
                client.sync().put(key, value);
                newer.put(key, Optional.of(value));
            }
        }
        for (String key : deleted) { // a key deleted before the backup, written again since
            byte[] value = ("written again after the backup " + key).getBytes(StandardCharsets.UTF_8);
            client.sync().put(key, value);
            newer.put(key, Optional.of(value));
        }
        return newer;
    }

    private Map<String, String> read(ProcessCluster c, Set<String> keys) {
        Map<String, String> out = new TreeMap<>();
        WriteLoad.readAll(client(c, 0), keys, 32, BOUND).forEach((k, v) -> out.put(k, show(v)));
        return out;
    }

    /** The keys and values without a ttl, read as ranges (merged over the cluster). */
    private Map<String, String> contents(ProcessCluster c) throws IOException {
        Map<String, String> out = new TreeMap<>();
        KvorumClient client = client(c, 0);
        for (String prefix : List.of("k/", "stale/")) {
            try (RangeReader range = client.range(prefix, prefix.substring(0, prefix.length() - 1) + "0")) {
                for (RangeReader.Entry e; (e = range.next()) != null; ) {
                    out.put(e.keyString(), show(Optional.of(e.value())));
                }
            }
        }
        assertThat(out).as("keys read by range").isNotEmpty();
        return out;
    }

    /**
     * A backup of the 5-node cluster, whose members write their parts slowly: n5 killed once it
     * has written some of its part makes the backup {@code failed}, never {@code done}.
     */
    private void killedMidwayFails(ProcessCluster c) {
        String id = startBackup(c, 0);
        Await.until("n5 to be writing its part of " + id, BOUND, () -> {
            JsonObject n5 = members(state(c, 0, id)).getAsJsonObject("n5");
            assertThat(n5.get("state").getAsString()).as("n5's part, before it could be killed").isNotEqualTo("done");
            return n5.get("records").getAsLong() > 0;
        }, c::describe);
        c.process(4).kill();
        JsonObject failed = awaitBackup(c, 0, id, "failed");
        assertThat(members(failed).getAsJsonObject("n5").get("state").getAsString()).as(failed.toString())
                .isEqualTo("failed");
    }

    /** Values with a ttl read 404 once it passed (timed from their answer), not later. */
    private void assertExpireOnTime(ProcessCluster c, List<Op> ttlOps) {
        KvorumClient client = client(c, 0);
        long last = ttlOps.stream().mapToLong(op -> op.answeredAtMillis + op.ttl.toMillis()).max().orElseThrow();
        Duration bound = Duration.ofMillis(Math.max(0, last - System.currentTimeMillis())).plusSeconds(5);
        List<String> keys = ttlOps.stream().map(Op::key).toList();
        Await.until("every value with a ttl to read 404 by the end of its ttl", bound,
                () -> WriteLoad.readAll(client, keys, 32, BOUND).values().stream().allMatch(Optional::isEmpty),
                c::describe);
    }

    /** {@code POST /v0/backup}; retried while a member is not yet seen up (503). */
    private String startBackup(ProcessCluster c, int via) {
        URI uri = URI.create(loopbackUri(c.http(via)) + "/v0/backup");
        AtomicReference<HttpResponse<String>> answer = new AtomicReference<>();
        Await.until("POST /v0/backup to answer other than 503", BOUND, () -> {
            answer.set(http.send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.noBody())));
            return answer.get().statusCode() != 503;
        }, c::describe);
        assertThat(answer.get().statusCode()).as("POST /v0/backup: %s", answer.get().body()).isEqualTo(202);
        return JsonParser.parseString(answer.get().body()).getAsJsonObject().get("id").getAsString();
    }

    private JsonObject awaitBackup(ProcessCluster c, int via, String id, String state) {
        JsonObject[] last = new JsonObject[1];
        Await.until("backup " + id + " to be " + state, BOUND, () -> {
            last[0] = state(c, via, id);
            return last[0].get("state").getAsString().equals(state);
        }, () -> String.valueOf(last[0]));
        return last[0];
    }

    private JsonObject state(ProcessCluster c, int via, String id) {
        HttpResponse<String> a = http.send(HttpRequest.newBuilder(URI.create(loopbackUri(c.http(via)) + "/v0/backup/" + id)));
        assertThat(a.statusCode()).as("GET /v0/backup/%s: %s", id, a.body()).isEqualTo(200);
        return JsonParser.parseString(a.body()).getAsJsonObject();
    }

    private static JsonObject members(JsonObject state) {
        return state.getAsJsonObject("members");
    }

    private KvorumClient client(ProcessCluster c, int node) {
        KvorumClient client = KvorumClient.create(loopbackUri(c.http(node)), Duration.ofSeconds(10));
        clients.add(client);
        return client;
    }

    /** A line in the test's output, for the time each step takes. */
    private void step(String what) {
        System.out.printf("[BackupRestoreIT] %5.1f s: %s%n", (System.nanoTime() - startedNanos) / 1e9, what);
    }

    private static String show(Optional<byte[]> value) {
        return value.map(v -> Base64.getEncoder().encodeToString(v)).orElse("(absent)");
    }

    /**
     * One operation at a time, each answered before the next: puts of new keys {@code k/*}, a
     * delete of an earlier one every fourth, and every tenth a put with a short or a long ttl.
     */
    private static final class Writer {
        final List<Op> ops = new CopyOnWriteArrayList<>();
        final AtomicInteger completed = new AtomicInteger();
        private final BlockingKvorumClient client;
        private final Random random;
        private final Thread thread;
        private volatile boolean stopping;

        Writer(BlockingKvorumClient client, long seed) {
            this.client = client;
            this.random = new Random(seed);
            this.thread = new Thread(this::run, "backup-writer");
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            stopping = true;
            thread.join(BOUND.toMillis());
            assertThat(thread.isAlive()).as("the writer stopped").isFalse();
        }

        private void run() {
            for (int i = 0; !stopping; i++) {
                if (i % 4 == 3) {
                    op(String.format("k/%06d", i - 2), null, null);
                } else if (i % 10 == 5) {
                    op(String.format("ttl-short/%06d", i), value(i), SHORT_TTL);
                } else if (i % 10 == 0) {
                    op(String.format("ttl-long/%06d", i), value(i), LONG_TTL);
                } else {
                    op(String.format("k/%06d", i), value(i), null);
                }
            }
        }

        private byte[] value(int i) {
            byte[] head = ("v" + i + "|").getBytes(StandardCharsets.UTF_8);
            byte[] value = Arrays.copyOf(head, head.length + random.nextInt(200));
            for (int j = head.length; j < value.length; j++) {
                value[j] = (byte) random.nextInt(256);
            }
            return value;
        }

        private void op(String key, byte[] value, Duration ttl) {
            int seq = ops.size();
            long sent = System.currentTimeMillis();
            boolean ok;
            try {
                if (value == null) {
                    client.delete(key);
                } else if (ttl == null) {
                    client.put(key, value);
                } else {
                    client.put(key, value, KvorumClient.Options.DEFAULT.withTtl(ttl));
                }
                ok = true;
            } catch (IOException | RuntimeException e) {
                ok = false;
            }
            ops.add(new Op(seq, key, value, ttl, sent, System.currentTimeMillis(), ok));
            completed.incrementAndGet();
        }
    }
}
