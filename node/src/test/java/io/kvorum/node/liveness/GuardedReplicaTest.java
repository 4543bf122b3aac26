package io.kvorum.node.liveness;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.coordinator.ReplicaUnavailableException.Reason;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.time.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class GuardedReplicaTest {

    private final ManualClock clock = new ManualClock(1_000L);
    private final PeerLiveness liveness = new PeerLiveness(List.of("n2"), clock,
            PeerLiveness.Detection.of(8, Duration.ofSeconds(1)));
    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
    private final HeartbeatsTest.FakeProbe probe = new HeartbeatsTest.FakeProbe("n2");
    private final Heartbeats heartbeats = new Heartbeats(liveness,
            new ClockOffsets(clock, Duration.ZERO, Duration.ofSeconds(10)), scheduler, Duration.ofHours(1), clock);
    private final ScriptedReplica peer = new ScriptedReplica();
    private final GuardedReplica guarded = new GuardedReplica(peer, liveness, heartbeats);

    @AfterEach
    void tearDown() {
        scheduler.shutdownNow();
    }

    @Test
    void aPeerKnownDownFailsAtOnceWithoutBeingAsked() {
        heartbeats.start(List.of(probe));
        liveness.unreachable("n2");
        CompletableFuture<Record> read = guarded.read(new byte[] {1});
        CompletableFuture<Boolean> write = guarded.write(new byte[] {1}, Record.tombstone(1L << 16, "n1"));
        assertThat(read).isCompletedExceptionally();
        assertThat(write).isCompletedExceptionally();
        assertThat(ReplicaUnavailableException.reasonOf(read.handle((r, e) -> e).join())).isEqualTo(Reason.KNOWN_DOWN);
        assertThat(peer.calls).as("requests that reached the peer").hasValue(0);
    }

    @Test
    void anUnknownPeerIsTriedAndItsAnswerMakesItUp() {
        heartbeats.start(List.of(probe));
        CompletableFuture<Record> read = guarded.read(new byte[] {1});
        assertThat(peer.calls).hasValue(1);
        peer.next.complete(null);
        assertThat(read).isCompleted();
        assertThat(liveness.state("n2")).isEqualTo(PeerLiveness.State.UP);
    }

    @Test
    void aFailedConnectionMakesThePeerDownAndProbesItAtOnce() throws Exception {
        heartbeats.start(List.of(probe));
        liveness.answered("n2", -1);
        CompletableFuture<Record> read = guarded.read(new byte[] {1});
        peer.next.completeExceptionally(new ReplicaUnavailableException(Reason.UNREACHABLE, "stream broke"));
        assertThat(read).isCompletedExceptionally();
        assertThat(liveness.state("n2")).isEqualTo(PeerLiveness.State.DOWN);
        HeartbeatsTest.Ping confirm = probe.next();
        assertThat(confirm.kind()).isEqualTo(PeerProbe.Kind.RECONNECT);
        confirm.answer().complete(null);
        HeartbeatsTest.awaitState(liveness, "n2", PeerLiveness.State.UP); // it answered the probe
    }

    @Test
    void aTimeoutLeavesThePeerUpButProbesIt() throws Exception {
        heartbeats.start(List.of(probe));
        liveness.answered("n2", -1);
        CompletableFuture<Record> read = guarded.read(new byte[] {1});
        peer.next.completeExceptionally(new ReplicaUnavailableException(Reason.TIMED_OUT, "slow"));
        assertThat(read).isCompletedExceptionally();
        assertThat(liveness.state("n2")).isEqualTo(PeerLiveness.State.UP);
        assertThat(probe.next().kind()).isEqualTo(PeerProbe.Kind.HEARTBEAT);
        assertThat(probe.pings.poll(100, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void aSuspectedPeerIsStillTriedAndItsAnswerMakesItUp() {
        heartbeats.start(List.of(probe));
        liveness.answered("n2", -1);
        clock.advance(10_000);
        liveness.checkSuspicions();
        assertThat(liveness.state("n2")).as("silent for 10 s").isEqualTo(PeerLiveness.State.DOWN);
        CompletableFuture<Boolean> write = guarded.write(new byte[] {1}, Record.tombstone(1L << 16, "n1"));
        assertThat(peer.calls).as("requests that reached the peer").hasValue(1);
        peer.next.complete(Boolean.TRUE);
        assertThat(write).isCompletedWithValue(Boolean.TRUE);
        assertThat(liveness.state("n2")).isEqualTo(PeerLiveness.State.UP);
    }

    @Test
    void anAnswerAfterTheDeadlineStillCountsAsLife() {
        heartbeats.start(List.of(probe));
        liveness.answered("n2", -1);
        CompletableFuture<Boolean> write = guarded.write(new byte[] {1}, Record.tombstone(1L << 16, "n1"));
        CompletableFuture<Void> late = new CompletableFuture<>();
        peer.next.completeExceptionally(ReplicaUnavailableException.timedOut("slow", late));
        assertThat(write).isCompletedExceptionally();
        clock.advance(10_000);
        late.complete(null); // the peer took the write after all
        liveness.checkSuspicions();
        assertThat(liveness.state("n2")).as("answered just now, if late").isEqualTo(PeerLiveness.State.UP);
        clock.advance(10_000);
        liveness.checkSuspicions();
        assertThat(liveness.state("n2")).as("then silent for 10 s").isEqualTo(PeerLiveness.State.DOWN);
    }

    /** A peer whose next answer the test gives through {@link #next}. */
    private static final class ScriptedReplica implements Replica {
        final AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Object> next;

        @Override
        public String nodeId() {
            return "n2";
        }

        @Override
        @SuppressWarnings("unchecked")
        public CompletableFuture<Record> read(byte[] key) {
            calls.incrementAndGet();
            next = new CompletableFuture<>();
            return next.thenApply(o -> (Record) o);
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            calls.incrementAndGet();
            next = new CompletableFuture<>();
            return next.thenApply(o -> (RecordDigest) o);
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            calls.incrementAndGet();
            next = new CompletableFuture<>();
            return next.thenApply(o -> Boolean.TRUE);
        }
    }
}
