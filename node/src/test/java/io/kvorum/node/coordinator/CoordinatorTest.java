package io.kvorum.node.coordinator;

import static io.kvorum.node.time.HybridLogicalClock.pack;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.time.ManualClock;
import io.kvorum.node.time.RequestTimer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class CoordinatorTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final byte[] KEY = "some-key".getBytes(StandardCharsets.UTF_8);
    private static final byte[] VALUE = "value".getBytes(StandardCharsets.UTF_8);
    private static final Duration NEVER = Duration.ofMinutes(5);

    private final ManualClock clock = new ManualClock(T0);
    private final HybridLogicalClock hlc = new HybridLogicalClock(clock);
    private final Map<String, HandAnsweredReplica> fakes = new HashMap<>();
    private ScheduledThreadPoolExecutor timer;
    private Placement placement;
    /** The fakes in KEY's preference order. */
    private List<HandAnsweredReplica> order;

    /**
     * A replica whose answers the test gives by hand, one call at a time, or that holds a record
     * ({@link #holds}) and answers every read of it, as a record or as a digest, at once.
     */
    static final class HandAnsweredReplica implements Replica {
        final String id;
        final List<CompletableFuture<Record>> reads = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<RecordDigest>> digests = new CopyOnWriteArrayList<>();
        final List<Record> written = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<Boolean>> writes = new CopyOnWriteArrayList<>();
        private volatile boolean holding;
        private volatile Record held;

        HandAnsweredReplica(String id) {
            this.id = id;
        }

        @Override
        public String nodeId() {
            return id;
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            CompletableFuture<Record> f = new CompletableFuture<>();
            reads.add(f);
            if (holding) {
                f.complete(held);
            }
            return f;
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            CompletableFuture<RecordDigest> f = new CompletableFuture<>();
            digests.add(f);
            if (holding) {
                f.complete(RecordDigest.of(held));
            }
            return f;
        }

        /** From now on holds {@code record} (null: none): answers the reads waiting and every later one with it. */
        void holds(Record record) {
            held = record;
            holding = true;
            reads.forEach(f -> f.complete(record));
            digests.forEach(f -> f.complete(RecordDigest.of(record)));
        }

        /** Fails the reads waiting. */
        void fails(Throwable error) {
            reads.forEach(f -> f.completeExceptionally(error));
            digests.forEach(f -> f.completeExceptionally(error));
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            CompletableFuture<Boolean> f = new CompletableFuture<>();
            written.add(record);
            writes.add(f);
            return f;
        }

        CompletableFuture<Record> read() {
            assertThat(reads).as("reads sent to %s", id).hasSize(1);
            return reads.get(0);
        }

        CompletableFuture<RecordDigest> digest() {
            assertThat(digests).as("digest reads sent to %s", id).hasSize(1);
            return digests.get(0);
        }

        CompletableFuture<Boolean> write() {
            assertThat(writes).as("writes sent to %s", id).hasSize(1);
            return writes.get(0);
        }
    }

    /** The placement of a cluster of n1, n2 and n3, with a fake replica of each put in {@code fakes}. */
    static Placement threeNodes(Map<String, HandAnsweredReplica> fakes) throws InvalidTopologyException {
        Topology topology = Topology.parse("n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083");
        for (ClusterMember m : topology.members()) {
            fakes.put(m.id(), new HandAnsweredReplica(m.id()));
        }
        return new Placement(topology);
    }

    @BeforeEach
    void setUp() throws InvalidTopologyException {
        placement = threeNodes(fakes);
        order = placement.replicasFor(KEY, 3).stream().map(m -> fakes.get(m.id())).toList();
        timer = new ScheduledThreadPoolExecutor(1);
    }

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
    }

    /** The replicas of KEY other than n1, the coordinator's own, in preference order. */
    private HandAnsweredReplica[] others() {
        return order.stream().filter(f -> !f.id.equals("n1")).toArray(HandAnsweredReplica[]::new);
    }

    private Coordinator coordinator(Duration timeout, RangeSource ranges) {
        return new Coordinator("n1", placement, Map.copyOf(fakes), hlc, clock, timeout, RequestTimer.of(timer), ranges);
    }

    private Coordinator coordinator() {
        return coordinator(NEVER, (start, end) -> {
            throw new AssertionError("no range expected");
        });
    }

    /** The failure of a future that failed already. */
    static Throwable failureOf(CompletableFuture<?> f) {
        assertThat(f).isCompletedExceptionally();
        try {
            f.get();
            throw new AssertionError("not failed");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static Record value(long ts, String writer) {
        return Record.value(ts, writer, VALUE, Record.NEVER_EXPIRES);
    }

    @Test
    void whileTheClockMayNotStampWritesArePreventedAndReadsGoOn() {
        Coordinator c = coordinator();
        c.refuseWrites("this node's clock is off");

        assertThat(failureOf(c.put(KEY, VALUE, 0, new Quorum(2, 3)))).isInstanceOf(ClockOffsetException.class)
                .hasMessage("this node's clock is off");
        assertThat(failureOf(c.delete(KEY, new Quorum(2, 3)))).isInstanceOf(ClockOffsetException.class);
        assertThat(order).allSatisfy(f -> assertThat(f.written).as("sent to %s", f.id).isEmpty());
        long clockBefore = hlc.now();
        CompletableFuture<Record> read = c.get(KEY, new Quorum(1, 1));
        order.forEach(f -> f.holds(null));
        assertThat(read).isCompletedWithValue(null);

        c.refuseWrites(null);
        c.put(KEY, VALUE, 0, new Quorum(2, 3));
        assertThat(order.get(0).written).as("accepted again").hasSize(1);
        assertThat(order.get(0).written.get(0).timestamp()).as("stamped now").isGreaterThan(clockBefore);
    }

    @Test
    void aPutAnswersAfterTheFastestAckWithoutWaitingForTheSlowReplica() {
        CompletableFuture<Record> put = coordinator().put(KEY, VALUE, 0, new Quorum(2, 3));

        // every replica got the same record at once
        for (HandAnsweredReplica f : order) {
            assertThat(f.written).hasSize(1);
            assertThat(f.written.get(0)).isEqualTo(order.get(0).written.get(0));
        }
        assertThat(put).isNotDone();

        order.get(2).write().complete(true);
        // 1 of 2 acks
        assertThat(put).isNotDone();
        order.get(0).write().complete(true);
        // 2 of 2 acks; the middle replica never answers
        assertThat(put).isCompleted();
        assertThat(put.join()).isEqualTo(order.get(0).written.get(0));
        assertThat(order.get(1).write()).isNotDone();
    }

    /**
     * A request placed by the previous epoch's plan may name a member that has just been
     * disconnected (it left): that replica fails at once, and the others still make the quorum.
     */
    @Test
    void aMemberThatIsNoLongerConnectedFailsAtOnceAndTheOthersStillMakeTheQuorum() {
        HandAnsweredReplica departed = others()[0];
        Map<String, Replica> connected = new java.util.HashMap<>(fakes);
        connected.remove(departed.id);
        Coordinator c = new Coordinator("n1", placement, connected, hlc, clock, NEVER, RequestTimer.of(timer),
                (start, end) -> {
                    throw new AssertionError("no range expected");
                });

        CompletableFuture<Record> two = c.put(KEY, VALUE, 0, new Quorum(2, 3));
        order.stream().filter(f -> f != departed).forEach(f -> f.write().complete(true));
        assertThat(two).isCompleted();
        assertThat(departed.written).isEmpty();

        CompletableFuture<Record> all = c.put(KEY, VALUE, 0, new Quorum(3, 3));
        assertThat(all).as("three acks are out of reach at once, not after a timeout").isCompletedExceptionally();
    }

    @Test
    void aPutGoesToExactlyFromReplicasInPreferenceOrder() {
        coordinator().put(KEY, VALUE, 0, new Quorum(1, 2));
        assertThat(order.get(0).written).hasSize(1);
        assertThat(order.get(1).written).hasSize(1);
        assertThat(order.get(2).written).isEmpty();
        assertThat(order.get(2).reads).isEmpty();
    }

    @Test
    void aGetAsksExactlyFromReplicas() {
        coordinator().get(KEY, new Quorum(1, 1));
        assertThat(order.get(0).reads).hasSize(1);
        for (HandAnsweredReplica f : order.subList(1, 3)) {
            assertThat(f.reads).isEmpty();
            assertThat(f.digests).isEmpty();
        }
    }

    @Test
    void failsAsSoonAsAckIsOutOfReach() {
        CompletableFuture<Record> get = coordinator().get(KEY, new Quorum(2, 3));
        order.get(0).fails(new IllegalStateException("down"));
        // 1 failure: two replicas may still answer
        assertThat(get).isNotDone();
        order.get(1).fails(new IllegalStateException("down"));
        // 2 failures: fails now, long before the deadline, without waiting for the third
        assertThat(failureOf(get)).isInstanceOf(NotEnoughReplicasException.class)
                .hasMessageContaining("ack=2")
                .hasMessageContaining("from=3");

        // a late answer changes nothing
        order.get(2).holds(value(1, "n2"));
        assertThat(failureOf(get)).isInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void aWriteFailsAsSoonAsAckIsOutOfReach() {
        CompletableFuture<Record> delete = coordinator().delete(KEY, new Quorum(3, 3));
        order.get(1).write().completeExceptionally(new IllegalStateException("down"));
        assertThat(failureOf(delete)).isInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void failsOnTheDeadlineWhenTooFewAnswer() {
        CompletableFuture<Record> get = coordinator(Duration.ofMillis(50), null).get(KEY, new Quorum(2, 3));
        order.get(0).holds(value(1, "n1"));
        // 1 of 2 answered; the others never do
        assertThat(get).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(NotEnoughReplicasException.class)
                .withMessageContaining("1 of the 2");
    }

    @Test
    void aPutFailsOnTheDeadlineWhenNoReplicaAnswers() {
        CompletableFuture<Record> put = coordinator(Duration.ofMillis(50), null).put(KEY, VALUE, 0, new Quorum(1, 3));
        assertThat(put).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void aGetReturnsTheNewestAmongTheAnswers() {
        CompletableFuture<Record> get = coordinator().get(KEY, new Quorum(3, 3));
        Record old = value(pack(T0, 0), "n3");
        Record newest = Record.tombstone(pack(T0, 5), "n1");
        Record middle = value(pack(T0, 5), "n0"); // same timestamp, lower writer
        order.get(0).holds(old);
        order.get(1).holds(newest);
        order.get(2).holds(middle);
        assertThat(get.join()).isEqualTo(newest);
    }

    @Test
    void aGetReturnsTheNewestAmongTheFirstAckAnswersOnly() {
        CompletableFuture<Record> get = coordinator().get(KEY, new Quorum(2, 3));
        HandAnsweredReplica[] others = others();
        fakes.get("n1").holds(null);
        others[0].holds(value(10, "n2"));
        assertThat(get.join()).isEqualTo(value(10, "n2"));
        // a newer version arriving after the answer does not change it
        others[1].holds(value(20, "n3"));
        assertThat(get.join()).isEqualTo(value(10, "n2"));
    }

    @Test
    void aGetOfAnAbsentKeyReturnsNull() {
        CompletableFuture<Record> get = coordinator().get(KEY, new Quorum(2, 3));
        order.get(0).holds(null);
        order.get(2).holds(null);
        assertThat(get).isCompletedWithValue(null);
    }

    @Test
    void aReadAnswerFromTheFutureMovesTheClockSoTheNextPutOrdersAfterIt() {
        Coordinator coordinator = coordinator();
        long remote = pack(T0 + 60_000, 3); // a replica whose clock is a minute ahead
        CompletableFuture<Record> get = coordinator.get(KEY, new Quorum(1, 1));
        order.get(0).holds(value(remote, "n3"));
        assertThat(get.join().timestamp()).isEqualTo(remote);

        coordinator.put(KEY, VALUE, 0, new Quorum(1, 1));
        Record written = order.get(0).written.get(0);
        assertThat(written.timestamp()).isGreaterThan(remote);
        assertThat(written.isNewerThan(value(remote, "n3"))).isTrue();
    }

    @Test
    void aLateReadAnswerAlsoMovesTheClock() {
        Coordinator coordinator = coordinator();
        long remote = pack(T0 + 60_000, 0);
        coordinator.get(KEY, new Quorum(1, 3));
        order.get(0).holds(null);
        order.get(1).holds(value(remote, "n2")); // after the answer
        assertThat(hlc.now()).isGreaterThan(remote);
    }

    @Test
    void overloadOfEveryReplicaIsReportedAsOverload() {
        CompletableFuture<Record> put = coordinator().put(KEY, VALUE, 0, new Quorum(2, 3));
        for (HandAnsweredReplica f : order) {
            f.write().completeExceptionally(new StorageOverloadedException("full"));
        }
        assertThat(failureOf(put)).isInstanceOf(OverloadedException.class);

        CompletableFuture<Record> get = coordinator().get(KEY, new Quorum(1, 1));
        order.get(0).fails(new CompletionException(new StorageOverloadedException("full")));
        assertThat(failureOf(get)).isInstanceOf(OverloadedException.class);
    }

    @Test
    void overloadOfSomeReplicasWaitsForTheOthersBeforeItIsReportedAsOverload() {
        // Two refusals make ack=2 unreachable, but the third replica may still store the write.
        CompletableFuture<Record> put = coordinator().put(KEY, VALUE, 0, new Quorum(2, 3));
        order.get(0).write().completeExceptionally(new StorageOverloadedException("full"));
        order.get(1).write().completeExceptionally(new StorageOverloadedException("full"));
        assertThat(put).as("503 would promise no effect while a replica may still take it").isNotDone();

        order.get(2).write().complete(true);
        assertThat(failureOf(put)).isInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void overloadWithAReplicaThatNeverAnswersIsAnUnknownOutcome() {
        CompletableFuture<Record> put = coordinator(Duration.ofMillis(50), null).put(KEY, VALUE, 0, new Quorum(1, 2));
        order.get(0).write().completeExceptionally(new StorageOverloadedException("full"));

        assertThat(put).as("the silent replica may take it late").failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void overloadWithTheOtherReplicaKnownDownIsStillOverload() {
        CompletableFuture<Record> put = coordinator().put(KEY, VALUE, 0, new Quorum(2, 3));
        order.get(0).write().completeExceptionally(new ReplicaUnavailableException(
                ReplicaUnavailableException.Reason.KNOWN_DOWN, "n9 is down: not sent"));
        order.get(1).write().completeExceptionally(new StorageOverloadedException("full"));
        order.get(2).write().completeExceptionally(new StorageOverloadedException("full"));

        assertThat(failureOf(put)).as("nothing was stored anywhere").isInstanceOf(OverloadedException.class);
    }

    @Test
    void aNodeWhoseTimestampsRunAheadOfItsWallClockRefusesWritesItsPeersWouldRefuse() {
        HybridLogicalClock bounded = new HybridLogicalClock(clock, Duration.ofMillis(500));
        bounded.observe(pack(T0 + 10_000, 0)); // its store's ceiling, after its wall clock was set back 10 s
        Coordinator c = new Coordinator("n1", placement, Map.copyOf(fakes), bounded, clock, NEVER, RequestTimer.of(timer), null);

        assertThat(failureOf(c.put(KEY, VALUE, 0, new Quorum(2, 3)))).isInstanceOf(ClockOffsetException.class)
                .hasMessageContaining("ahead of its wall clock");
        assertThat(failureOf(c.delete(KEY, new Quorum(2, 3)))).isInstanceOf(ClockOffsetException.class);
        order.forEach(f -> assertThat(f.written).as("nothing sent to %s", f.id).isEmpty());

        clock.advance(9_600); // the wall clock catches up to within the bound
        assertThat(c.put(KEY, VALUE, 0, new Quorum(2, 3))).isNotDone();
    }

    @Test
    void overloadAfterAPartialWriteIsNotReportedAsOverload() {
        // 503 promises the request had no effect; one replica did store it.
        CompletableFuture<Record> put = coordinator().put(KEY, VALUE, 0, new Quorum(3, 3));
        order.get(0).write().complete(true);
        order.get(1).write().completeExceptionally(new StorageOverloadedException("full"));
        assertThat(failureOf(put)).isInstanceOf(NotEnoughReplicasException.class);
    }

    private static final byte[] LARGE = new byte[4 << 20];

    /** Eight writes of 4 MiB values, the initial bound of large writes (32 MiB): all of them admitted. */
    private static List<CompletableFuture<Record>> fillTheLargeWriteBound(Coordinator c) {
        List<CompletableFuture<Record>> admitted = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            admitted.add(c.put(KEY, LARGE, 0, new Quorum(2, 3)));
        }
        return admitted;
    }

    @Test
    void aLargeWritePastTheBoundWaitsBeforeAnyReplicaSeesItAndGoesOnceAnotherIsAnswered() {
        Coordinator c = coordinator();
        List<CompletableFuture<Record>> admitted = fillTheLargeWriteBound(c);

        CompletableFuture<Record> waiting = c.put(KEY, LARGE, 0, new Quorum(2, 3));
        order.forEach(f -> assertThat(f.written).as("writes sent to %s", f.id).hasSize(8));
        assertThat(c.put(KEY, VALUE, 0, new Quorum(2, 3))).as("a small write goes at once").isNotDone();
        order.forEach(f -> assertThat(f.written).as("writes sent to %s", f.id).hasSize(9));

        order.forEach(f -> f.writes.get(0).complete(true));
        assertThat(admitted.get(0)).isCompleted();
        order.forEach(f -> assertThat(f.written).as("writes sent to %s", f.id).hasSize(10));
        assertThat(order.get(0).written.get(9).timestamp()).as("stamped once admitted")
                .isGreaterThan(order.get(0).written.get(8).timestamp());
        assertThat(waiting).isNotDone();
    }

    @Test
    void aLargeWriteKeepsItsPlaceUntilItsLastReplicaCallSettlesNotOnlyUntilItIsAnswered() {
        Coordinator c = coordinator();
        List<CompletableFuture<Record>> admitted = fillTheLargeWriteBound(c);
        CompletableFuture<Record> waiting = c.put(KEY, LARGE, 0, new Quorum(2, 3));

        order.get(0).writes.get(0).complete(true);
        order.get(1).writes.get(0).complete(true);
        assertThat(admitted.get(0)).as("answered by 2 of 3").isCompleted();
        order.forEach(f -> assertThat(f.written).as("the third replica's call still holds the value").hasSize(8));

        CompletableFuture<Void> lateAnswer = new CompletableFuture<>();
        order.get(2).writes.get(0).completeExceptionally(
                ReplicaUnavailableException.timedOut(order.get(2).id + " did not answer in time", lateAnswer));
        order.forEach(f -> assertThat(f.written).as("a late answer is still awaited").hasSize(8));

        lateAnswer.complete(null);
        order.forEach(f -> assertThat(f.written).as("writes sent to %s", f.id).hasSize(9));
        assertThat(waiting).isNotDone();
    }

    @Test
    void putsAreStampedWithThisNodeAndExpireTtlAfterNow() {
        Coordinator coordinator = coordinator();
        clock.set(T0 + 123);
        coordinator.put(KEY, VALUE, 5_000, new Quorum(1, 1));
        Record r = order.get(0).written.get(0);
        assertThat(r.writer()).isEqualTo("n1");
        assertThat(r.tombstone()).isFalse();
        assertThat(r.value()).isEqualTo(VALUE);
        assertThat(r.expiresAtMillis()).isEqualTo(T0 + 123 + 5_000);
        assertThat(HybridLogicalClock.physicalMillis(r.timestamp())).isEqualTo(T0 + 123);
    }

    @Test
    void aPutWithoutTtlNeverExpires() {
        coordinator().put(KEY, VALUE, 0, new Quorum(1, 1));
        assertThat(order.get(0).written.get(0).expiresAtMillis()).isEqualTo(Record.NEVER_EXPIRES);
    }

    @Test
    void aDeleteWritesATombstoneStampedWithThisNode() {
        coordinator().delete(KEY, new Quorum(1, 1));
        Record r = order.get(0).written.get(0);
        assertThat(r.tombstone()).isTrue();
        assertThat(r.writer()).isEqualTo("n1");
        assertThat(r.value()).isEmpty();
    }

    @Test
    void writesWithinOneMillisecondAreOrdered() {
        Coordinator coordinator = coordinator();
        coordinator.put(KEY, VALUE, 0, new Quorum(1, 1));
        coordinator.delete(KEY, new Quorum(1, 1));
        coordinator.put(KEY, VALUE, 0, new Quorum(1, 1));
        List<Record> written = order.get(0).written;
        assertThat(written).hasSize(3);
        assertThat(written.get(1).isNewerThan(written.get(0))).isTrue();
        assertThat(written.get(2).isNewerThan(written.get(1))).isTrue();
    }

    @Test
    void aReplicaAnsweringAtOnceIsCounted() {
        Map<String, Replica> instant = new HashMap<>();
        for (String id : fakes.keySet()) {
            instant.put(id, new Replica() {
                @Override
                public String nodeId() {
                    return id;
                }

                @Override
                public CompletableFuture<Record> read(byte[] key) {
                    return CompletableFuture.completedFuture(value(7, id));
                }

                @Override
                public CompletableFuture<RecordDigest> readDigest(byte[] key) {
                    return CompletableFuture.completedFuture(RecordDigest.of(value(7, id)));
                }

                @Override
                public CompletableFuture<Boolean> write(byte[] key, Record record) {
                    return CompletableFuture.completedFuture(true);
                }
            });
        }
        Coordinator c = new Coordinator("n1", placement, instant, hlc, clock, NEVER, RequestTimer.of(timer), null);
        assertThat(c.get(KEY, new Quorum(3, 3))).isCompletedWithValue(value(7, "n3"));
        assertThat(c.put(KEY, VALUE, 0, new Quorum(3, 3))).isCompleted();
    }

    /** An entry stream of fixed batches, then the end. */
    private static final class ListStream implements EntryStream {
        private final Deque<List<Entry>> batches;
        boolean closed;

        ListStream(List<List<Entry>> batches) {
            this.batches = new ArrayDeque<>(batches);
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            List<Entry> b = batches.poll();
            return CompletableFuture.completedFuture(b == null ? List.of() : b);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static Entry entry(String key, Record r) {
        return new Entry(key.getBytes(StandardCharsets.UTF_8), r);
    }

    @Test
    void rangesSkipTombstonesAndExpiredEntriesWithoutEndingEarly() throws Exception {
        clock.set(T0);
        ListStream source = new ListStream(List.of(
                List.of(entry("a", Record.tombstone(1, "n1")), entry("b", Record.value(1, "n1", VALUE, T0))),
                List.of(entry("c", Record.value(1, "n1", VALUE, T0 + 1)), entry("d", Record.tombstone(1, "n1"))),
                List.of(entry("e", value(1, "n1")))));
        byte[][] asked = new byte[2][];
        EntryStream range = coordinator(NEVER, (start, end) -> {
            asked[0] = start;
            asked[1] = end;
            return source;
        }).range("a".getBytes(StandardCharsets.UTF_8), null);

        assertThat(asked[0]).isEqualTo("a".getBytes(StandardCharsets.UTF_8));
        assertThat(asked[1]).isNull();
        // the first batch is all dead: it must not read as the end
        List<Entry> first = range.next().get(10, TimeUnit.SECONDS);
        assertThat(first).extracting(e -> new String(e.key(), StandardCharsets.UTF_8)).containsExactly("c");
        List<Entry> second = range.next().get(10, TimeUnit.SECONDS);
        assertThat(second).extracting(e -> new String(e.key(), StandardCharsets.UTF_8)).containsExactly("e");
        assertThat(range.next().get(10, TimeUnit.SECONDS)).isEmpty();

        range.close();
        assertThat(source.closed).isTrue();
    }
}
