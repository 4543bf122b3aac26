package io.kvorum.node.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.coordinator.CoordinatorTest.HandAnsweredReplica;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.time.ManualClock;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.time.TimestampAheadException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The coordinator's side of hinted handoff (docs/operations.md#how-replicas-converge): every write a remote replica did not
 * acknowledge goes to the {@link HintSink}, before or after the client was answered; nothing else
 * does. Replicas answer by hand, one at a time, as in {@link CoordinatorTest}.
 */
@Timeout(30)
class HintingCoordinatorTest {

    private static final byte[] KEY = "hinted-key".getBytes(StandardCharsets.UTF_8);
    private static final byte[] VALUE = "value".getBytes(StandardCharsets.UTF_8);

    /** One hint as the sink received it. */
    private record Hinted(String nodeId, byte[] key, Record record) {
    }

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    private final Map<String, HandAnsweredReplica> fakes = new HashMap<>();
    private final List<Hinted> hints = new CopyOnWriteArrayList<>();
    /** What the sink answers for every hint: written at once unless a test says otherwise. */
    private volatile CompletableFuture<Void> hintWritten = HintSink.KEPT;
    private ScheduledThreadPoolExecutor timer;
    private Coordinator coordinator;
    /** The fakes in KEY's preference order. */
    private List<HandAnsweredReplica> order;

    @BeforeEach
    void setUp() throws InvalidTopologyException {
        Topology topology = Topology.parse("n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083");
        Placement placement = new Placement(topology);
        for (ClusterMember m : topology.members()) {
            fakes.put(m.id(), new HandAnsweredReplica(m.id()));
        }
        order = placement.replicasFor(KEY, 3).stream().map(m -> fakes.get(m.id())).toList();
        timer = new ScheduledThreadPoolExecutor(1);
        coordinator = new Coordinator("n1", placement, Map.copyOf(fakes), new HybridLogicalClock(clock), clock,
                Duration.ofMinutes(5), RequestTimer.of(timer), (start, end) -> {
                    throw new AssertionError("no range expected");
                }, (nodeId, key, record) -> {
                    hints.add(new Hinted(nodeId, key, record));
                    return hintWritten;
                });
    }

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
    }

    private static Quorum quorum(int ack, int from) {
        return new Quorum(ack, from);
    }

    /** The first fake in KEY's preference order that is not n1, the coordinator itself. */
    private HandAnsweredReplica remote(int skip) {
        return order.stream().filter(f -> !f.id.equals("n1")).skip(skip).findFirst().orElseThrow();
    }

    @Test
    void aRemoteReplicaThatFailsAWriteGetsTheRecordAsAHint() {
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(2, 3));
        HandAnsweredReplica down = remote(0);
        down.write().completeExceptionally(new ReplicaUnavailableException(down.id + " is unreachable"));
        assertThat(hints).hasSize(1);
        assertThat(hints.get(0).nodeId()).isEqualTo(down.id);
        assertThat(hints.get(0).key()).isEqualTo(KEY);
        assertThat(hints.get(0).record()).isEqualTo(down.written.get(0));
        assertThat(put).isNotDone();
    }

    @Test
    void aReplicaThatFailsAfterTheClientWasAnsweredStillGetsAHint() {
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        fakes.get("n1").write().complete(true);
        assertThat(put).isCompleted();
        // answered: the other two are still outstanding; one acknowledges, one fails late
        remote(0).write().complete(true);
        remote(1).write().completeExceptionally(new ReplicaUnavailableException("timed out"));
        assertThat(hints).extracting(Hinted::nodeId).containsExactly(remote(1).id);
    }

    @Test
    void theAnswerWaitsForTheHintsMadeBeforeIt() {
        hintWritten = new CompletableFuture<>();
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        remote(0).write().completeExceptionally(new ReplicaUnavailableException(remote(0).id + " is unreachable"));
        fakes.get("n1").write().complete(true);
        assertThat(hints).extracting(Hinted::nodeId).containsExactly(remote(0).id);
        assertThat(put).as("acknowledged, but its hint is not written yet").isNotDone();

        hintWritten.complete(null);
        assertThat(put).isCompleted();
    }

    @Test
    void aReplicaKnownDownIsHintedAndTheHintWrittenBeforeTheAnswer() {
        hintWritten = new CompletableFuture<>();
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        remote(0).write().completeExceptionally(new ReplicaUnavailableException(
                ReplicaUnavailableException.Reason.KNOWN_DOWN, remote(0).id + " is down"));
        assertThat(hints).as("the write may yet be answered 503, with no effect anywhere").isEmpty();
        fakes.get("n1").write().complete(true);
        assertThat(hints).extracting(Hinted::nodeId).containsExactly(remote(0).id);
        assertThat(put).isNotDone();

        hintWritten.complete(null);
        assertThat(put).isCompleted();
    }

    @Test
    void aWriteAnswered504WaitsForItsHintsToo() {
        hintWritten = new CompletableFuture<>();
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(3, 3));
        remote(0).write().completeExceptionally(new ReplicaUnavailableException(remote(0).id + " is unreachable"));
        assertThat(put).isNotDone();

        hintWritten.complete(null);
        assertThat(catchThrowable(put::join)).cause().isInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void hintsMadeAfterTheAnswerDoNotHoldIt() {
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        fakes.get("n1").write().complete(true);
        assertThat(put).isCompleted();
        hintWritten = new CompletableFuture<>();
        remote(0).write().completeExceptionally(new ReplicaUnavailableException("late failure"));
        assertThat(hints).extracting(Hinted::nodeId).containsExactly(remote(0).id);
    }

    @Test
    void aWriteThatTimedOutButIsTakenLateIsNotHinted() {
        coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        CompletableFuture<Void> lateAnswer = new CompletableFuture<>();
        remote(0).write().completeExceptionally(ReplicaUnavailableException.timedOut("no answer yet", lateAnswer));
        assertThat(hints).as("the replica may still take it").isEmpty();

        lateAnswer.complete(null);
        assertThat(hints).isEmpty();
    }

    @Test
    void aWriteThatTimedOutAndThenFailedIsHinted() {
        coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        CompletableFuture<Void> lateAnswer = new CompletableFuture<>();
        remote(0).write().completeExceptionally(ReplicaUnavailableException.timedOut("no answer yet", lateAnswer));
        lateAnswer.completeExceptionally(new ReplicaUnavailableException(ReplicaUnavailableException.Reason.TIMED_OUT,
                "no answer within twice the timeout"));
        assertThat(hints).extracting(Hinted::nodeId).containsExactly(remote(0).id);
        assertThat(hints.get(0).record()).isEqualTo(remote(0).written.get(0));
    }

    @Test
    void aRefusalForOverloadIsHintedOnceAnotherReplicaTookTheWrite() {
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        remote(0).write().completeExceptionally(new StorageOverloadedException("full"));
        assertThat(hints).as("the write may yet be answered 503, with no effect anywhere").isEmpty();

        fakes.get("n1").write().complete(true);
        assertThat(put).isCompleted();
        assertThat(hints).extracting(Hinted::nodeId).containsExactly(remote(0).id);
    }

    @Test
    void aWriteEveryReplicaRefusedForOverloadIs503AndLeavesNoHint() {
        CompletableFuture<Record> put = coordinator.put(KEY, VALUE, 0, quorum(2, 3));
        order.forEach(f -> f.write().completeExceptionally(new StorageOverloadedException("full")));

        assertThat(put).isCompletedExceptionally();
        assertThat(catchThrowable(put::join)).cause().isInstanceOf(OverloadedException.class);
        assertThat(hints).as("503 means no effect anywhere: no hint may apply it later").isEmpty();
    }

    @Test
    void aWriteAReplicaRefusedForItsTimestampIsNotHinted() {
        coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        remote(0).write().completeExceptionally(new TimestampAheadException("further ahead than --max-clock-offset"));
        fakes.get("n1").write().complete(true);
        assertThat(hints).as("a delivery would be refused the same way").isEmpty();
    }

    @Test
    void aDeleteThatMissesAReplicaHintsTheTombstone() {
        coordinator.delete(KEY, quorum(1, 3));
        remote(1).write().completeExceptionally(new ReplicaUnavailableException("down"));
        assertThat(hints).hasSize(1);
        assertThat(hints.get(0).record().tombstone()).isTrue();
        assertThat(hints.get(0).record()).isEqualTo(remote(1).written.get(0));
    }

    @Test
    void theCoordinatorsOwnReplicaIsNeverHinted() {
        coordinator.put(KEY, VALUE, 0, quorum(1, 3));
        fakes.get("n1").write().completeExceptionally(new StorageOverloadedException("full"));
        assertThat(hints).isEmpty();
    }

    @Test
    void acknowledgedWritesAndFailedReadsLeaveNoHint() {
        coordinator.put(KEY, VALUE, 0, quorum(3, 3));
        order.forEach(f -> f.write().complete(true));
        coordinator.get(KEY, quorum(1, 3));
        order.forEach(f -> f.fails(new ReplicaUnavailableException("down")));
        assertThat(hints).isEmpty();
    }
}
