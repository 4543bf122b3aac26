package io.kvorum.node.coordinator;

import static io.kvorum.node.coordinator.CoordinatorTest.failureOf;
import static io.kvorum.node.time.HybridLogicalClock.pack;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.PlacementPlan;
import io.kvorum.node.coordinator.CoordinatorTest.HandAnsweredReplica;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.metrics.NodeMetrics.DigestFallback;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.time.ManualClock;
import io.kvorum.node.time.RequestTimer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The coordinator's digest reads ({@link DigestRead}): n1 coordinates and, as one of the key's
 * replicas, is asked for the record; the two others ({@link #a} and {@link #b}, in preference
 * order) only for digests. Replicas answer by hand, one at a time, as in {@link CoordinatorTest}.
 */
@Timeout(30)
class DigestReadTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final byte[] KEY = "digest-key".getBytes(StandardCharsets.UTF_8);
    private static final Duration NEVER = Duration.ofMinutes(5);

    private final ManualClock clock = new ManualClock(T0);
    private final HybridLogicalClock hlc = new HybridLogicalClock(clock);
    private final Map<String, HandAnsweredReplica> fakes = new HashMap<>();
    private final NodeMetrics metrics = NodeMetrics.unregistered();
    private ScheduledThreadPoolExecutor timer;
    private Placement placement;
    /** n1, the coordinator's own replica: asked for the record. */
    private HandAnsweredReplica self;
    /** The key's other replicas, in preference order: asked for digests. */
    private HandAnsweredReplica a;
    private HandAnsweredReplica b;

    @BeforeEach
    void setUp() throws InvalidTopologyException {
        placement = CoordinatorTest.threeNodes(fakes);
        List<HandAnsweredReplica> others = placement.replicasFor(KEY, 3).stream().map(m -> fakes.get(m.id()))
                .filter(f -> !f.id.equals("n1")).toList();
        self = fakes.get("n1");
        a = others.get(0);
        b = others.get(1);
        timer = new ScheduledThreadPoolExecutor(1);
    }

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
        metrics.close();
    }

    private Coordinator coordinator(Duration timeout) {
        return new Coordinator("n1", PlacementPlan.of(placement), Map.copyOf(fakes), hlc, clock, timeout, RequestTimer.of(timer),
                null, HintSink.NONE, metrics);
    }

    private static Record value(long ts, String writer, String value) {
        return Record.value(ts, writer, value.getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES);
    }

    private long fallbacks(DigestFallback cause) {
        return (long) metrics.digestFallbacks(cause).count();
    }

    private long repairs() {
        return (long) metrics.readRepairs().count();
    }

    private void assertFetchingFromAOnly(CompletableFuture<Record> get, DigestFallback cause) {
        assertThat(get).isNotDone();
        assertThat(a.read()).isNotDone();
        assertThat(b.reads).isEmpty();
        assertThat(fallbacks(cause)).as("fallbacks for %s", cause).isEqualTo(1);
    }

    @Test
    void onlyTheOwnReplicaIsAskedForTheRecordAndTheOthersForDigests() {
        coordinator(NEVER).get(KEY, new Quorum(2, 3));
        assertThat(self.reads).hasSize(1);
        assertThat(self.digests).isEmpty();
        for (HandAnsweredReplica other : List.of(a, b)) {
            assertThat(other.reads).as("records asked of %s", other.id).isEmpty();
            assertThat(other.digests).as("digests asked of %s", other.id).hasSize(1);
        }
    }

    @Test
    void whenTheDigestsAgreeTheAnswerIsTheRecordWithoutAnotherRead() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));

        a.digest().complete(RecordDigest.of(v1));
        // 1 of 2 answers, and no record yet
        assertThat(get).isNotDone();
        self.read().complete(v1);
        // 2 of 2: the record and a digest of the same version
        assertThat(get).isCompletedWithValue(v1);
        assertThat(get.join().value()).isEqualTo("v1".getBytes(StandardCharsets.UTF_8));

        b.digest().complete(RecordDigest.of(v1));
        assertThat(a.reads).isEmpty();
        assertThat(b.reads).isEmpty();
        assertThat(self.written).as("nothing to repair").isEmpty();
        assertThat(fallbacks(DigestFallback.MISMATCH)).isZero();
    }

    @Test
    void aNewerDigestFetchesItsRecordAnswersItAndRepairsTheStaleReplicas() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        Record v2 = value(pack(T0, 2), "n3", "v2");
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));

        self.read().complete(v1);
        a.digest().complete(RecordDigest.of(v2));
        // 2 answers, but the newest is a digest: its record is fetched from the replica that named it
        assertFetchingFromAOnly(get, DigestFallback.MISMATCH);

        a.read().complete(v2);
        assertThat(get).isCompletedWithValue(v2);
        assertThat(get.join().value()).isEqualTo("v2".getBytes(StandardCharsets.UTF_8));
        // the stale replica that answered is repaired at once, without waiting for b (docs/operations.md#how-replicas-converge: within a second)
        assertThat(self.written).containsExactly(v2);
        assertThat(b.written).isEmpty();

        b.digest().complete(RecordDigest.of(v1)); // b answers late, stale too: repaired then, and self not again
        assertThat(self.written).containsExactly(v2);
        assertThat(b.written).containsExactly(v2);
        assertThat(a.written).isEmpty();
        assertThat(repairs()).isEqualTo(2);
    }

    @Test
    void aTombstoneDigestNewerThanTheValueAnswersAbsentAtOnceAndIsRepaired() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        Record deleted = Record.tombstone(pack(T0, 2), "n3");
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));

        self.read().complete(v1);
        a.digest().complete(RecordDigest.of(deleted));
        // the digest of a tombstone is the whole tombstone: nothing to fetch
        assertThat(get).isCompleted();
        assertThat(get.join().tombstone()).isTrue();
        assertThat(get.join()).isEqualTo(deleted);
        assertThat(get.join().readsAsAbsentAt(T0)).as("answered 404").isTrue();
        assertThat(a.reads).isEmpty();

        b.digest().complete(null);
        assertThat(self.written).containsExactly(deleted);
        assertThat(b.written).containsExactly(deleted);
    }

    @Test
    void digestsOfNoVersionAnswerAbsentWithoutWaitingForTheRecord() {
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));
        a.digest().complete(null);
        b.digest().complete(null);
        assertThat(get).isCompletedWithValue(null);
        assertThat(self.read()).isNotDone();
    }

    @Test
    void whenTheRecordReplicaFailsTheRecordIsFetchedFromAReplicaThatSentADigest() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));

        self.read().completeExceptionally(new StorageOverloadedException("full"));
        a.digest().complete(RecordDigest.of(v1));
        b.digest().complete(RecordDigest.of(v1));
        // two versions answered, but no record: the first replica that named it is asked for it
        assertFetchingFromAOnly(get, DigestFallback.FAILED);

        a.read().complete(v1);
        assertThat(get).isCompletedWithValue(v1);
    }

    @Test
    void aRecordReplicaThatDoesNotAnswerIsOvertakenLongBeforeTheDeadline() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        a.holds(v1);
        b.holds(v1);
        // self never answers; a and b hold v1 and answer at once, digests and records alike
        CompletableFuture<Record> get = coordinator(Duration.ofSeconds(8)).get(KEY, new Quorum(2, 3));

        // within an eighth of the timeout, a is asked for the record
        assertThat(get).succeedsWithin(Duration.ofSeconds(5)).isEqualTo(v1);
        assertThat(a.reads).hasSize(1);
        assertThat(self.read()).isNotDone();
        assertThat(fallbacks(DigestFallback.SLOW)).isEqualTo(1);
    }

    @Test
    void underLoadOnlyTheHedgeBudgetIsSpentEarlyAndTheOtherReadsFetchLaterButStillAnswer() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        a.holds(v1);
        b.holds(v1);
        Coordinator coordinator = coordinator(Duration.ofMillis(800));
        // More reads than the reserve, all with a record replica (self) that never answers.
        int reads = HedgeBudget.RESERVE + 20;
        List<CompletableFuture<Record>> gets = new ArrayList<>();
        for (int i = 0; i < reads; i++) {
            gets.add(coordinator.get(KEY, new Quorum(2, 3)));
        }
        // docs/operations.md#how-replicas-converge: ack replicas answered, so every read answers; a hang costs the withheld ones time only.
        for (CompletableFuture<Record> get : gets) {
            assertThat(get).succeedsWithin(Duration.ofSeconds(5)).isEqualTo(v1);
        }
        long withheld = (long) metrics.digestHedgesWithheld().count();
        long early = reads - withheld;
        // The reserve, plus a tenth of a token for each read made while it was not full.
        assertThat(early).isBetween((long) HedgeBudget.RESERVE, (long) HedgeBudget.RESERVE + reads / 10);
        assertThat(fallbacks(DigestFallback.SLOW)).as("early and overdue fetches alike").isEqualTo(reads);
        assertThat(a.reads).as("one record fetched from a per read").hasSize(reads);
        assertThat(b.reads).isEmpty();
    }

    @Test
    void aWithheldHedgeWaitsForTheRecordReplicaUntilHalfTheTimeout() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        HedgeBudget spent = new HedgeBudget(metrics.digestHedgesWithheld());
        for (int i = 0; i < HedgeBudget.RESERVE; i++) {
            assertThat(spent.tryHedge()).isTrue();
        }
        // Timers fired by hand, by their delay: the deadline (8 s), slow (1 s) and, once withheld, overdue (3 s more).
        Map<Long, Runnable> timers = new HashMap<>();
        RequestTimer manual = (task, delay, unit) -> {
            timers.put(unit.toMillis(delay), task);
            return () -> timers.remove(unit.toMillis(delay));
        };
        List<DigestRead.Slot> slots = List.of(new DigestRead.Slot(self, metrics.replicas("n1")),
                new DigestRead.Slot(a, metrics.replicas(a.id)), new DigestRead.Slot(b, metrics.replicas(b.id)));
        Map<DigestFallback, io.micrometer.core.instrument.Counter> causes = new HashMap<>();
        for (DigestFallback cause : DigestFallback.values()) {
            causes.put(cause, metrics.digestFallbacks(cause));
        }
        DigestRead read = new DigestRead(KEY, new Quorum(2, 3), slots, slots.get(0), hlc, manual,
                TimeUnit.SECONDS.toNanos(8), metrics.readRepairs(), causes, spent).start();
        a.digest().complete(RecordDigest.of(v1));
        b.digest().complete(RecordDigest.of(v1));
        assertThat(timers).containsOnlyKeys(8000L, 1000L);

        timers.get(1000L).run(); // an eighth of the timeout: the budget withholds the hedge
        assertThat(metrics.digestHedgesWithheld().count()).isEqualTo(1.0);
        assertThat(a.reads).as("nothing fetched yet").isEmpty();
        assertThat(timers).containsKey(3000L);

        timers.get(3000L).run(); // half of it: fetched from a, which answers, and so does the read
        a.read().complete(v1);
        assertThat(read.result).isCompletedWithValue(v1);
        assertThat(self.read()).isNotDone();
        assertThat(timers).as("the deadline is cancelled").doesNotContainKey(8000L);
    }

    /** A read where only a named v2, the others v1, and a then failed to send its record of v2. */
    private CompletableFuture<Record> aLostTheNewest(Record v1, Record v2) {
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));
        self.read().complete(v1);
        a.digest().complete(RecordDigest.of(v2));
        b.digest().complete(RecordDigest.of(v1));
        a.read().completeExceptionally(new ReplicaUnavailableException("down"));
        // a named v2, which may be the latest acknowledged write: v1 is no answer. b is asked for its record.
        assertThat(get).isNotDone();
        return get;
    }

    @Test
    void whenTheOnlyReplicaWithTheNewestVersionCannotSendItOthersAreAskedAndNoOlderValueIsAnswered() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        CompletableFuture<Record> get = aLostTheNewest(v1, value(pack(T0, 2), "n3", "v2"));
        b.read().complete(v1);
        assertThat(failureOf(get)).isInstanceOf(NotEnoughReplicasException.class)
                .hasMessageContaining("newest version");
        assertThat(self.written).as("no record of v2 to repair with").isEmpty();
    }

    @Test
    void theFallbackTakesTheNewerRecordAReplicaReceivedSinceItsDigest() {
        Record v2 = value(pack(T0, 2), "n3", "v2");
        CompletableFuture<Record> get = aLostTheNewest(value(pack(T0, 1), "n2", "v1"), v2);
        b.read().complete(v2);
        assertThat(get).isCompletedWithValue(v2);
    }

    @Test
    void tooFewAnswersFailWithNotEnoughReplicas() {
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));
        self.read().complete(value(pack(T0, 1), "n2", "v1"));
        a.digest().completeExceptionally(new ReplicaUnavailableException("down"));
        // 1 answer, 1 failure: b may still answer
        assertThat(get).isNotDone();
        b.digest().completeExceptionally(new ReplicaUnavailableException("down"));
        assertThat(failureOf(get)).isInstanceOf(NotEnoughReplicasException.class).hasMessageContaining("1 of the 2");
    }

    @Test
    void tooFewAnswersByTheDeadlineFailWithNotEnoughReplicas() {
        CompletableFuture<Record> get = coordinator(Duration.ofMillis(100)).get(KEY, new Quorum(2, 3));
        a.digest().complete(RecordDigest.of(value(pack(T0, 1), "n2", "v1")));
        assertThat(get).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void aDigestFromTheFutureMovesTheClock() {
        long remote = pack(T0 + 60_000, 3);
        coordinator(NEVER).get(KEY, new Quorum(2, 3));
        a.digest().complete(RecordDigest.of(Record.tombstone(remote, "n2")));
        assertThat(hlc.now()).isGreaterThan(remote);
    }

    @Test
    void aNewerDigestAfterTheAnswerIsFetchedToRepairTheOthers() {
        Record v1 = value(pack(T0, 1), "n2", "v1");
        Record v2 = value(pack(T0, 2), "n3", "v2");
        CompletableFuture<Record> get = coordinator(NEVER).get(KEY, new Quorum(2, 3));
        self.read().complete(v1);
        a.digest().complete(RecordDigest.of(v1));
        assertThat(get).isCompletedWithValue(v1);

        b.digest().complete(RecordDigest.of(v2));
        // the client has its answer; b's record is fetched for the repair of self and a
        b.read().complete(v2);
        assertThat(get.join()).isEqualTo(v1);
        assertThat(self.written).containsExactly(v2);
        assertThat(a.written).containsExactly(v2);
        assertThat(b.written).isEmpty();
    }
}
