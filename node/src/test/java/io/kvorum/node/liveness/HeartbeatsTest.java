package io.kvorum.node.liveness;

import static io.kvorum.node.liveness.PeerLiveness.State.DOWN;
import static io.kvorum.node.liveness.PeerLiveness.State.UNKNOWN;
import static io.kvorum.node.liveness.PeerLiveness.State.UP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.coordinator.ReplicaUnavailableException.Reason;
import io.kvorum.node.liveness.PeerProbe.Kind;
import io.kvorum.node.time.ManualClock;
import io.kvorum.testkit.Await;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Drives {@link Heartbeats} through fake probes whose answers the test gives by hand. The tick is
 * an hour unless a test says otherwise, so that every ping seen was caused by what the test did.
 */
@Timeout(30)
class HeartbeatsTest {

    private static final Duration NEVER = Duration.ofHours(1);

    private final ManualClock clock = new ManualClock(1_000L);
    private final PeerLiveness liveness = new PeerLiveness(List.of("n2", "n3"), clock,
            PeerLiveness.Detection.of(8, Duration.ofSeconds(1)));
    private final ClockOffsets clockOffsets = new ClockOffsets(clock, Duration.ofMillis(500), Duration.ofSeconds(10));
    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
    private final FakeProbe n2 = new FakeProbe("n2");
    private final FakeProbe n3 = new FakeProbe("n3");

    @AfterEach
    void tearDown() {
        scheduler.shutdownNow();
    }

    private Heartbeats started(Duration interval) {
        Heartbeats h = new Heartbeats(liveness, clockOffsets, scheduler, interval, clock);
        h.start(List.of(n2, n3));
        return h;
    }

    @Test
    void anAnnouncementCompletesWhenEveryPeerHasAnsweredOrFailed() throws Exception {
        Heartbeats h = started(NEVER);
        CompletableFuture<Void> announced = h.announce();
        Ping toN2 = n2.next();
        Ping toN3 = n3.next();
        assertThat(toN2.kind()).isEqualTo(Kind.ANNOUNCE);
        assertThat(toN3.kind()).isEqualTo(Kind.ANNOUNCE);
        toN2.answer().complete(null);
        assertThat(announced).as("n3 has not answered yet").isNotDone();
        awaitState(liveness, "n2", UP);
        toN3.answer().completeExceptionally(new ReplicaUnavailableException(Reason.UNREACHABLE, "refused"));
        announced.get(5, TimeUnit.SECONDS);
        assertThat(liveness.state("n3")).as("recorded before the announcement completes").isEqualTo(DOWN);
    }

    @Test
    void aPeerThatAnnouncesItselfIsReachedBackBeforeTheAnnouncementIsAnswered() throws Exception {
        Heartbeats h = started(NEVER);
        liveness.unreachable("n2");
        CompletableFuture<Void> answer = h.announced("n2");
        Ping back = n2.next();
        assertThat(back.kind()).as("reconnect at once, skipping the backoff").isEqualTo(Kind.RECONNECT);
        assertThat(answer).isNotDone();
        back.answer().complete(null);
        answer.get(5, TimeUnit.SECONDS);
        awaitState(liveness, "n2", UP);
    }

    @Test
    void theTickSendsHeartbeatsToPeersThatAreUpAndReconnectsToTheOthers() throws Exception {
        liveness.answered("n2", 1);
        started(Duration.ofMillis(20));
        Ping toN2 = n2.next();
        Ping toN3 = n3.next();
        assertThat(toN2.kind()).isEqualTo(Kind.HEARTBEAT);
        assertThat(toN3.kind()).as("n3 is unknown").isEqualTo(Kind.RECONNECT);
        assertThat(n2.pings.poll(200, TimeUnit.MILLISECONDS)).as("no second ping while one is in flight").isNull();
        clock.advance(3);
        toN2.answer().complete(null);
        toN3.answer().completeExceptionally(new ReplicaUnavailableException(Reason.TIMED_OUT, "no answer"));
        awaitState(liveness, "n3", DOWN); // an unknown peer that misses one heartbeat
        // the sending thread records the round trip, maybe after the test moved on
        within10s().untilAsserted(() ->
                assertThat(liveness.snapshot().get("n2").rttMicros()).as("measured by the heartbeat").isEqualTo(3_000));
        assertThat(n2.next().kind()).as("the next tick").isEqualTo(Kind.HEARTBEAT);
        assertThat(n3.next().kind()).isEqualTo(Kind.RECONNECT);
    }

    @Test
    void anAnswerCarriesThePeersClockWhichIsMeasuredAgainstThisNodes() throws Exception {
        liveness.answered("n2", 1);
        Heartbeats h = started(NEVER);
        Ping toN2 = probeUntilPinged(h, n2);
        clock.advance(4);
        toN2.answer().complete(new PeerProbe.Pong(clock.currentTimeMillis() - 2 + 7_000, "")); // answered mid-trip, 7 s ahead
        within10s().untilAsserted(() -> assertThat(clockOffsets.offset("n2")).as("n2's clock").isNotNull()
                .extracting(ClockOffsets.Offset::millis).isEqualTo(7_000L));
        assertThat(h.wallClockMillis()).as("what this node's answers carry").isEqualTo(clock.currentTimeMillis());

        h.removePeer("n2");
        assertThat(clockOffsets.offset("n2")).as("a member that left").isNull();
    }

    @Test
    void heartbeatsWithoutAnswerMakeAnUpPeerSuspectedOnlyOnceItsSilenceIsUnlikely() throws Exception {
        liveness.answered("n2", 1);
        Heartbeats h = started(NEVER);
        for (int i = 0; i < 3; i++) {
            clock.advance(1_000);
            probeUntilPinged(h, n2).answer().completeExceptionally(new ReplicaUnavailableException(Reason.TIMED_OUT, "late"));
            assertThat(liveness.state("n2")).as("after " + (i + 1) + " s without answer").isEqualTo(UP);
        }
        clock.advance(1_000);
        probeUntilPinged(h, n2).answer().completeExceptionally(new ReplicaUnavailableException(Reason.TIMED_OUT, "late"));
        awaitState(liveness, "n2", DOWN);
        assertThat(liveness.failsFast("n2")).as("suspected, not unreachable").isFalse();
    }

    @Test
    void theChecksSuspectASilentPeerBetweenHeartbeats() throws Exception {
        liveness.answered("n2", 1);
        started(Duration.ofMillis(40)); // checked every 10 ms
        Ping first = n2.next(); // in flight, unanswered: no second heartbeat is sent meanwhile
        clock.advance(2_000);
        assertThat(liveness.state("n2")).as("2 s without answer").isEqualTo(UP);
        clock.advance(2_000);
        awaitState(liveness, "n2", DOWN);
        first.answer().complete(null);
        awaitState(liveness, "n2", UP);
    }

    @Test
    void probesAreNotDuplicatedWhileOneIsInFlight() throws Exception {
        Heartbeats h = started(NEVER);
        h.probeSoon("n3");
        h.probeSoon("n3");
        Ping first = n3.next();
        h.probeSoon("n3");
        assertThat(n3.pings.poll(200, TimeUnit.MILLISECONDS)).isNull();
        first.answer().complete(null);
        assertThat(probeUntilPinged(h, n3).kind()).as("n3 answered, so it is up").isEqualTo(Kind.HEARTBEAT);
    }

    /**
     * Waits for the outcome of a ping the test answered: the thread that sent the ping may record
     * it after the test thread moved on.
     */
    static void awaitState(PeerLiveness liveness, String peer, PeerLiveness.State state) throws InterruptedException {
        within10s().untilAsserted(() -> assertThat(liveness.state(peer)).as(peer + " after 10 s").isEqualTo(state));
    }

    /** A bounded poll every 5 ms, on the test's thread: the threads it waits for have the cores. */
    private static ConditionFactory within10s() {
        return await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5))
                .pollInSameThread();
    }

    /**
     * Asks for a probe until one is sent. A ping whose answer the test gave may still count as in
     * flight for a moment: the delivery thread that sent it records its end, and may do so after
     * the test thread moved on.
     */
    static Ping probeUntilPinged(Heartbeats h, FakeProbe peer) {
        return Await.untilValue("a ping to " + peer.id, Duration.ofSeconds(10), () -> {
            h.probeSoon(peer.id);
            return peer.pings.poll();
        }, Objects::nonNull);
    }

    @Test
    void aHeartbeatFromAPeerNotKnownUpMakesThisNodeProbeIt() throws Exception {
        Heartbeats h = started(NEVER);
        liveness.unreachable("n3");
        h.pinged("n3");
        Ping back = n3.next();
        assertThat(back.kind()).isEqualTo(Kind.RECONNECT);
        back.answer().complete(null);
        awaitState(liveness, "n3", UP);
        h.pinged("n3");
        h.pinged("n9"); // not a member: ignored
        assertThat(n3.pings.poll(200, TimeUnit.MILLISECONDS)).as("no probe for a peer that is up").isNull();
        assertThat(liveness.state("n2")).isEqualTo(UNKNOWN);
    }

    record Ping(Kind kind, CompletableFuture<PeerProbe.Pong> answer) {
    }

    /** A peer whose answers the test gives: every ping waits in {@link #pings}. */
    static final class FakeProbe implements PeerProbe {
        final String id;
        final BlockingQueue<Ping> pings = new LinkedBlockingQueue<>();

        FakeProbe(String id) {
            this.id = id;
        }

        @Override
        public String nodeId() {
            return id;
        }

        @Override
        public CompletableFuture<PeerProbe.Pong> ping(Kind kind, String incarnation) {
            CompletableFuture<PeerProbe.Pong> answer = new CompletableFuture<>();
            pings.add(new Ping(kind, answer));
            return answer;
        }

        Ping next() throws InterruptedException {
            Ping p = pings.poll(10, TimeUnit.SECONDS);
            assertThat(p).as("a ping to " + id + " within 10 s").isNotNull();
            return p;
        }
    }
}
