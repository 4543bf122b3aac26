package io.kvorum.node.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.Rendezvous;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipStore;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A joining node's intake over members held in memory: each record of the keys it gains is taken
 * once, a newer version on a member that is not the chosen source is fetched after its digest, and
 * a member that fails is passed over for the next replica of each of its keys.
 */
class JoinStreamTest {

    private static final int KEYS = 300;
    private static final List<String> CURRENT = List.of("n1", "n2", "n3");

    @TempDir
    Path dir;
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final Map<String, MemoryNode> members = new TreeMap<>();
    private final MemoryNode self = new MemoryNode();
    private Membership joining;

    @BeforeEach
    void cluster() throws Exception {
        Membership first = Membership.first("kvorum", Topology.parse(
                "n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083"), 3);
        joining = first.withJoining(new ClusterMember("n4", "127.0.0.1", 8084, 9084));
        for (String id : CURRENT) {
            MemoryNode node = new MemoryNode();
            for (int i = 0; i < KEYS; i++) {
                node.put(key(i), Record.value(10, "n1", ("v1-" + i).getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES));
            }
            members.put(id, node);
        }
    }

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static boolean gained(byte[] key) {
        return Rendezvous.over(List.of("n1", "n2", "n3", "n4")).replicas(key, 3).contains("n4");
    }

    private JoinStream stream(MoveProgress progress) {
        ClusterMembership membership = new ClusterMembership("n4", joining, new MembershipStore(dir), executor);
        return new JoinStream(membership, members::get, members::get, self, self, progress, Tuning.DEFAULTS.changes(),
                Duration.ZERO);
    }

    private void move(JoinStream stream, MoveProgress progress) throws Exception {
        progress.beginFor(joining.epoch());
        stream.move(joining);
    }

    @Test
    void eachRecordIsTakenOnceAndANewerVersionElsewhereIsFetchedAfterItsDigest() throws Exception {
        byte[] newer = null;
        String holder = null;
        for (int i = 0; i < KEYS && newer == null; i++) {
            if (gained(key(i))) {
                newer = key(i);
                String chosen = Rendezvous.over(CURRENT).replicas(newer, 1).get(0);
                holder = CURRENT.stream().filter(id -> !id.equals(chosen)).findFirst().orElseThrow();
            }
        }
        Record v2 = Record.value(20, "n2", "v2".getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES);
        members.get(holder).put(newer, v2);
        MoveProgress progress = new MoveProgress(dir, MoveProgress.JOIN_FILE);

        move(stream(progress), progress);

        long gained = 0;
        for (int i = 0; i < KEYS; i++) {
            boolean gains = gained(key(i));
            gained += gains ? 1 : 0;
            assertThat(self.records.containsKey(key(i))).as("key-%d, gained: %s", i, gains).isEqualTo(gains);
        }
        assertThat(self.records.get(newer)).as("the newer version, from " + holder).isEqualTo(v2);
        assertThat(self.writes.get()).as("each record once, and the newer version").isEqualTo(gained + 1);
        assertThat(members.values().stream().mapToInt(m -> m.reads.get()).sum()).as("records fetched after a digest")
                .isEqualTo(1);
        assertThat(members.get(holder).reads.get()).isEqualTo(1);
    }

    @Test
    void aMemberThatFailsIsPassedOverAndTheNextReplicaOfEachOfItsKeysServesThem() throws Exception {
        members.get("n1").failing = true;
        MoveProgress progress = new MoveProgress(dir, MoveProgress.JOIN_FILE);
        JoinStream stream = stream(progress);

        assertThatThrownBy(() -> move(stream, progress)).as("n1's digests are still to check")
                .isInstanceOf(ExecutionException.class);

        long gained = 0;
        for (int i = 0; i < KEYS; i++) {
            if (gained(key(i))) {
                gained++;
                assertThat(self.records).as("key-%d", i).containsKey(key(i));
            }
        }
        assertThat(self.writes.get()).as("taken once, from n2 and n3").isEqualTo(gained);
        assertThat(members.values().stream().mapToInt(m -> m.reads.get()).sum()).isZero();

        members.get("n1").failing = false;
        move(stream, progress); // the retry: n1 is back
        assertThat(progress.isDone("n1")).isTrue();
    }

    /** A member's records in memory: its replica and its raw range source. */
    private static final class MemoryNode implements Replica, RangeSource {
        final ConcurrentSkipListMap<byte[], Record> records = new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger writes = new AtomicInteger();
        volatile boolean failing;

        void put(byte[] key, Record record) {
            records.put(key, record);
        }

        @Override
        public String nodeId() {
            return "memory";
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            reads.incrementAndGet();
            return CompletableFuture.completedFuture(records.get(key));
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            return CompletableFuture.completedFuture(RecordDigest.of(records.get(key)));
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            writes.incrementAndGet();
            Record before = records.get(key);
            if (record.isNewerThan(before)) {
                records.put(key, record);
                return CompletableFuture.completedFuture(true);
            }
            return CompletableFuture.completedFuture(false);
        }

        @Override
        public EntryStream open(byte[] start, byte[] end) {
            Iterator<Map.Entry<byte[], Record>> it = (end == null ? records.tailMap(start, true)
                    : records.subMap(start, true, end, false)).entrySet().iterator();
            return new EntryStream() {
                @Override
                public CompletableFuture<List<Entry>> next() {
                    if (failing) {
                        return CompletableFuture.failedFuture(new ReplicaUnavailableException("down"));
                    }
                    List<Entry> batch = new ArrayList<>();
                    while (it.hasNext() && batch.size() < 16) {
                        Map.Entry<byte[], Record> e = it.next();
                        batch.add(new Entry(e.getKey(), e.getValue()));
                    }
                    return CompletableFuture.completedFuture(batch);
                }

                @Override
                public void close() {
                }
            };
        }
    }
}
