package io.kvorum.node.hints;

import static io.kvorum.node.hints.HintStoreTest.awaitTrue;
import static io.kvorum.node.hints.HintStoreTest.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kvorum.node.coordinator.LocalReplica;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.hints.HintStore.Limits;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.time.ManualClock;
import io.kvorum.node.time.TimestampAheadException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link HintedHandoff} against fake replicas whose answers the test decides. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HintedHandoffTest {

    private static final int WINDOW = 8;

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock(HintStoreTest.T0);
    private HintStore store;
    private HintedHandoff handoff;
    private final HintTargetReplica n2 = new HintTargetReplica("n2");

    /**
     * A replica that acknowledges up to {@link #acksLeft} writes (then fails the rest with
     * {@link ReplicaUnavailableException}, as a peer that is down), or, when {@link #manual}, keeps
     * every answer for the test to give.
     */
    static final class HintTargetReplica implements Replica {
        final String id;
        final AtomicInteger acksLeft = new AtomicInteger(Integer.MAX_VALUE);
        volatile boolean manual;
        final List<String> attempted = new CopyOnWriteArrayList<>();
        final List<String> acknowledged = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<Boolean>> pending = new CopyOnWriteArrayList<>();
        /** Keys whose records this replica refuses for good, as stamped too far ahead of its clock. */
        final Set<String> refused = ConcurrentHashMap.newKeySet();

        HintTargetReplica(String id) {
            this.id = id;
        }

        @Override
        public String nodeId() {
            return id;
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            throw new AssertionError("hinted handoff never reads");
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            throw new AssertionError("hinted handoff never reads");
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            String k = new String(key, StandardCharsets.UTF_8);
            attempted.add(k);
            CompletableFuture<Boolean> answer = new CompletableFuture<>();
            if (refused.contains(k)) {
                answer.completeExceptionally(new TimestampAheadException(id + " refused it"));
            } else if (manual) {
                pending.add(answer);
            } else if (acksLeft.getAndDecrement() > 0) {
                acknowledged.add(k);
                answer.complete(true);
            } else {
                answer.completeExceptionally(new ReplicaUnavailableException(id + " is unreachable"));
            }
            return answer;
        }

        void down() {
            acksLeft.set(0);
        }

        void up() {
            acksLeft.set(Integer.MAX_VALUE);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        store = HintStore.open(dir.resolve("hints"), false,
                new Limits(1L << 30, Duration.ofHours(3), 1024, 64L << 20), clock);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (handoff != null) {
            handoff.close();
        }
        store.close();
    }

    private HintedHandoff handoff(Map<String, Replica> peers) {
        return handoff(peers, Long.MAX_VALUE);
    }

    private HintedHandoff handoff(Map<String, Replica> peers, long windowBytes) {
        handoff = new HintedHandoff(store, peers, Duration.ofMillis(20), WINDOW, windowBytes);
        return handoff;
    }

    private void hint(String peer, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            store.hint(peer, ("k" + i).getBytes(StandardCharsets.UTF_8), value(i + 1, "v" + i));
        }
        store.flush().get();
    }

    private static List<String> keys(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "k" + i).toList();
    }

    @Test
    void deliversEveryHintInArrivalOrderAndDeletesIt() throws Exception {
        hint("n2", 50); // several windows
        handoff(Map.of("n2", n2)).deliverPending().get();

        assertThat(n2.acknowledged).containsExactlyElementsOf(keys(0, 50));
        assertThat(store.pending("n2")).isZero();
        assertThat(handoff.delivered()).isEqualTo(50);
    }

    @Test
    void aPeerThatIsDownGetsOneProbeARoundAndKeepsItsHints() throws Exception {
        hint("n2", 20);
        n2.down();
        HintedHandoff h = handoff(Map.of("n2", n2));
        h.deliverPending().get();
        h.deliverPending().get();

        assertThat(n2.attempted).containsExactly("k0", "k0");
        assertThat(store.pending("n2")).isEqualTo(20);
        assertThat(h.delivered()).isZero();
    }

    @Test
    void stopsAtTheFirstFailureKeepsWhatWasNotAcknowledgedAndResumesInOrder() throws Exception {
        hint("n2", 20);
        n2.acksLeft.set(4); // the probe and three of the next window, then the peer goes away
        HintedHandoff h = handoff(Map.of("n2", n2));
        h.deliverPending().get();

        assertThat(n2.acknowledged).containsExactlyElementsOf(keys(0, 4));
        assertThat(n2.attempted).as("no window after the one that failed").hasSize(1 + WINDOW);
        assertThat(store.read("n2", 0, 100)).extracting(HintStoreTest::keyOf).containsExactlyElementsOf(keys(4, 20));
        assertThat(h.delivered()).isEqualTo(4);

        n2.up();
        h.deliverPending().get();
        assertThat(n2.acknowledged).containsExactlyElementsOf(keys(0, 20));
        assertThat(store.pending("n2")).isZero();
        assertThat(h.delivered()).isEqualTo(20);
    }

    @Test
    void aHintItsPeerRefusesForItsTimestampIsKeptAndDeliveryGoesOnPastIt() throws Exception {
        hint("n2", 20);
        n2.refused.add("k0"); // the probe
        n2.refused.add("k5");
        HintedHandoff h = handoff(Map.of("n2", n2));
        h.deliverPending().get();

        assertThat(n2.acknowledged).as("the rest, in one round").containsExactlyElementsOf(
                keys(0, 20).stream().filter(k -> !k.equals("k0") && !k.equals("k5")).toList());
        assertThat(store.read("n2", 0, 100)).as("kept: it may be the peer's clock that is wrong")
                .extracting(HintStoreTest::keyOf).containsExactly("k0", "k5");

        n2.refused.clear(); // the peer's clock was fixed
        h.deliverPending().get();
        assertThat(store.pending("n2")).isZero();
        assertThat(h.delivered()).isEqualTo(20);
    }

    @Test
    void aWindowOfLargeHintsIsBoundedInBytesToo() throws Exception {
        for (int i = 0; i < 20; i++) {
            Record large = Record.value(i + 1, "n1", new byte[1000], Record.NEVER_EXPIRES);
            store.hint("n2", ("k" + i).getBytes(StandardCharsets.UTF_8), large);
        }
        store.flush().get();
        n2.acksLeft.set(1); // the probe, then every write of the first window fails
        HintedHandoff h = handoff(Map.of("n2", n2), 2500);
        h.deliverPending().get();

        // A window ends once its stored bytes reach 2,500: three hints of over 1,000 bytes, not WINDOW.
        assertThat(n2.attempted).containsExactly("k0", "k1", "k2", "k3");
        assertThat(store.pending("n2")).isEqualTo(19);

        n2.up();
        h.deliverPending().get();
        assertThat(n2.acknowledged).containsExactlyElementsOf(keys(0, 20));
        assertThat(store.pending("n2")).isZero();
    }

    @Test
    void aHintIsDeletedOnlyOnceItsPeerAcknowledgedIt() throws Exception {
        hint("n2", 3);
        n2.manual = true;
        CompletableFuture<Void> round = handoff(Map.of("n2", n2)).deliverPending();

        awaitTrue("the probe to be sent", () -> n2.pending.size() == 1);
        assertThat(store.pending("n2")).as("sent but not acknowledged").isEqualTo(3);
        n2.pending.get(0).complete(false); // acknowledged; "false" only says the peer had it already
        awaitTrue("the window to be sent", () -> n2.pending.size() == 3);
        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("k1", "k2");
        n2.pending.get(2).complete(true);
        n2.pending.get(1).completeExceptionally(new ReplicaUnavailableException("timed out"));
        round.get();

        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("k1");
        assertThat(handoff.delivered()).isEqualTo(2);
    }

    @Test
    void eachPeerIsServedOnItsOwnAndUnknownPeersAreLeftAlone() throws Exception {
        HintTargetReplica n3 = new HintTargetReplica("n3");
        n3.down();
        hint("n2", 5);
        hint("n3", 5);
        hint("gone", 5); // no longer in the cluster: kept until the age bound drops it
        handoff(Map.of("n2", n2, "n3", n3)).deliverPending().get();

        assertThat(store.pendingByPeer()).containsOnlyKeys("n3", "gone");
        assertThat(n2.acknowledged).containsExactlyElementsOf(keys(0, 5));
    }

    @Test
    void onceStartedItRetriesUntilThePeerIsBack() throws Exception {
        hint("n2", 30);
        n2.down();
        handoff(Map.of("n2", n2)).start();
        awaitTrue("a few probes of the peer that is down", () -> n2.attempted.size() >= 3);
        assertThat(store.pending("n2")).isEqualTo(30);

        n2.up();
        awaitTrue("every hint to be delivered", () -> store.pending("n2") == 0);
        assertThat(n2.acknowledged).containsExactlyElementsOf(keys(0, 30));
    }

    @Test
    void aReplayedHintNeverOverwritesANewerVersion() throws Exception {
        LevelDbStore db = LevelDbStore.open(dir.resolve("records"), false, 1 << 20);
        try (StorageService storage = new StorageService(db, 1, 64)) {
            byte[] key = "k0".getBytes(StandardCharsets.UTF_8);
            Record newer = value(100, "newer");
            assertThat(storage.write(key, newer).get()).isTrue();
            hint("n2", 1); // k0 at timestamp 1: older
            Replica replica = new LocalReplica("n2", storage, new HybridLogicalClock(clock));

            handoff(Map.of("n2", replica)).deliverPending().get();

            assertThat(storage.read(key).get()).isEqualTo(newer);
            assertThat(store.pending("n2")).as("acknowledged, so deleted").isZero();
        }
    }

    @Test
    void aRecordAPeerStampedFurtherAheadThanTheBoundIsRefusedAndNotStored() throws Exception {
        LevelDbStore db = LevelDbStore.open(dir.resolve("records"), false, 1 << 20);
        try (StorageService storage = new StorageService(db, 1, 64)) {
            HybridLogicalClock hlc = new HybridLogicalClock(clock, Duration.ofMillis(500));
            Replica replica = new LocalReplica("n2", storage, hlc);
            byte[] key = "k".getBytes(StandardCharsets.UTF_8);
            long farAhead = HybridLogicalClock.pack(clock.currentTimeMillis() + 60_000, 0);

            Throwable refused = catchThrowable(() -> replica.writeFromPeer(key, Record.value(farAhead, "n1", new byte[1], 0)).get());
            assertThat(refused).hasCauseInstanceOf(TimestampAheadException.class);
            assertThat(catchThrowable(() -> replica.writeFromPeer(key, Record.value(farAhead, "n2", new byte[1], 0)).get()))
                    .as("whatever writer the record names, this node's own included").hasCauseInstanceOf(TimestampAheadException.class);
            assertThat(storage.read(key).get()).as("not stored").isNull();
            assertThat(hlc.now()).as("the clock did not jump a minute ahead").isLessThan(farAhead);

            long withinBound = HybridLogicalClock.pack(clock.currentTimeMillis() + 400, 0);
            assertThat(replica.writeFromPeer(key, Record.value(withinBound, "n1", new byte[1], 0)).get()).isTrue();
            assertThat(replica.write(key, Record.value(farAhead, "n3", new byte[1], 0)).get())
                    .as("what a join or anti-entropy brings is stored").isTrue();
            assertThat(hlc.now()).as("but does not move the clock either").isLessThan(farAhead);
        }
    }
}
