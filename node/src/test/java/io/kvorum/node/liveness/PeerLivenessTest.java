package io.kvorum.node.liveness;

import static io.kvorum.node.liveness.PeerLiveness.State.DOWN;
import static io.kvorum.node.liveness.PeerLiveness.State.UNKNOWN;
import static io.kvorum.node.liveness.PeerLiveness.State.UP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.liveness.PeerLiveness.PeerStatus;
import io.kvorum.node.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Feeds the state machine one report at a time, with a manual clock, and checks it after each. */
class PeerLivenessTest {

    private static final long START = 1_700_000_000_000L;

    private final ManualClock clock = new ManualClock(START);
    private final List<String> changes = new ArrayList<>();
    private PeerLiveness liveness;

    @BeforeEach
    void setUp() {
        liveness = new PeerLiveness(List.of("n2", "n3"), clock, PeerLiveness.Detection.of(8, Duration.ofSeconds(1)));
        liveness.addListener(new PeerLiveness.Listener() {
            @Override
            public void peerUp(String peer) {
                changes.add(peer + " up");
            }

            @Override
            public void peerDown(String peer) {
                changes.add(peer + " down");
            }

            @Override
            public void peerSuspected(String peer) {
                changes.add(peer + " suspected");
            }
        });
    }

    private void assertPeer(String peer, PeerLiveness.State state, long sinceMillis) {
        PeerStatus s = liveness.snapshot().get(peer);
        assertThat(s.state()).as(peer + " state").isEqualTo(state);
        assertThat(s.sinceMillis()).as(peer + " since").isEqualTo(sinceMillis);
        assertThat(liveness.isDown(peer)).as(peer + " isDown").isEqualTo(state == DOWN);
    }

    @Test
    void everyPeerIsUnknownUntilHeardFromAndUnknownIsTried() {
        assertPeer("n2", UNKNOWN, START);
        assertPeer("n3", UNKNOWN, START);
        assertThat(liveness.snapshot().keySet()).containsExactly("n2", "n3");
        assertThat(liveness.snapshot().get("n2").rttMicros()).as("no round trip measured yet").isEqualTo(-1);
        assertThat(changes).isEmpty();
    }

    @Test
    void anAnswerMakesAPeerUpAndAFailedConnectionMakesItDownAtOnce() {
        clock.advance(10);
        liveness.answered("n2", 250_000);
        // unknown -> up, since now, with the heartbeat's round trip
        assertPeer("n2", UP, START + 10);
        assertThat(liveness.snapshot().get("n2").rttMicros()).isEqualTo(250);
        clock.advance(10);
        liveness.unreachable("n2");
        // up -> down at once, since now
        assertPeer("n2", DOWN, START + 20);
        clock.advance(10);
        liveness.unreachable("n2");
        // still down, still since the first failure
        assertPeer("n2", DOWN, START + 20);
        clock.advance(10);
        liveness.answered("n2", -1);
        // down -> up; an unmeasured answer keeps the last round trip
        assertPeer("n2", UP, START + 40);
        assertThat(liveness.snapshot().get("n2").rttMicros()).isEqualTo(250);
        assertThat(changes).containsExactly("n2 up", "n2 down", "n2 up");
        assertPeer("n3", UNKNOWN, START);
    }

    /** Ten heartbeats answered a second apart: a steady history (phi 8 at about 3.04 s of silence). */
    private void steadyHeartbeats(String peer) {
        for (int i = 0; i < 10; i++) {
            clock.advance(1_000);
            liveness.heartbeatAnswered(peer, 1_000);
        }
    }

    @Test
    void anUpPeerIsSuspectedOnlyOnceItsSilenceIsUnlikelyAndIsStillTried() {
        steadyHeartbeats("n2");
        long upSince = START + 1_000;
        clock.advance(2_900);
        liveness.missed("n2");
        liveness.checkSuspicions();
        // two heartbeats' worth of silence: a slow moment, still up
        assertPeer("n2", UP, upSince);
        assertThat(liveness.phi("n2")).as("phi after 2.9 s").isBetween(1.0, 8.0);
        clock.advance(200);
        liveness.checkSuspicions();
        // 3.1 s: past the threshold, suspected without any missed heartbeat
        assertPeer("n2", DOWN, START + 13_100);
        assertThat(liveness.failsFast("n2")).as("a suspected peer is still sent requests").isFalse();
        clock.advance(10);
        liveness.answered("n2", -1);
        assertPeer("n2", UP, START + 13_110);
        assertThat(changes).containsExactly("n2 up", "n2 suspected", "n2 up");
    }

    @Test
    void anyAnswerPutsOffSuspicionHoweverLateTheHeartbeats() {
        steadyHeartbeats("n2");
        for (int i = 0; i < 20; i++) {
            clock.advance(2_900);
            liveness.missed("n2");
            liveness.answered("n2", -1); // a request answered, as heartbeats keep missing
            liveness.checkSuspicions();
        }
        assertPeer("n2", UP, START + 1_000);
        assertThat(changes).containsExactly("n2 up");
    }

    @Test
    void aSuspectedPeerWhoseConnectionFailsFailsFastFromThen() {
        steadyHeartbeats("n2");
        clock.advance(5_000);
        liveness.checkSuspicions();
        assertPeer("n2", DOWN, START + 15_000);
        assertThat(liveness.failsFast("n2")).isFalse();
        clock.advance(10);
        liveness.unreachable("n2");
        // still down since it was suspected, now without trying it
        assertPeer("n2", DOWN, START + 15_000);
        assertThat(liveness.failsFast("n2")).isTrue();
        liveness.unreachable("n2");
        liveness.missed("n2");
        assertThat(changes).containsExactly("n2 up", "n2 suspected", "n2 down");
    }

    @Test
    void irregularHeartbeatsAreGivenMoreTimeThanSteadyOnes() {
        for (int i = 0; i <= 10; i++) { // n3's answers come alternately 2.5 s and 0.5 s apart
            clock.advance(i == 0 ? 1_000 : i % 2 == 1 ? 2_500 : 500);
            liveness.heartbeatAnswered("n3", 1_000);
        }
        steadyHeartbeats("n2");
        liveness.answered("n3", -1); // both last heard from now
        clock.advance(3_500);
        liveness.checkSuspicions();
        assertThat(liveness.state("n2")).as("steady n2 after 3.5 s").isEqualTo(DOWN);
        assertThat(liveness.state("n3")).as("irregular n3 after 3.5 s").isEqualTo(UP);
        assertThat(liveness.phi("n3")).as("n3's phi").isLessThan(2);
    }

    @Test
    void anUnknownPeerIsSuspectedAfterOneMissedHeartbeatButNotByTheChecks() {
        clock.advance(60_000);
        liveness.checkSuspicions();
        assertPeer("n3", UNKNOWN, START);
        liveness.missed("n3");
        assertPeer("n3", DOWN, START + 60_000);
        assertThat(liveness.failsFast("n3")).isFalse();
        assertThat(liveness.phi("n3")).as("never heard from").isNaN();
        assertThat(changes).containsExactly("n3 suspected");
    }

    @Test
    void reportsAboutIdsThatAreNotPeersAreIgnored() {
        liveness.answered("n9", 1);
        liveness.unreachable("n9");
        liveness.missed("n9");
        liveness.heartbeatAnswered("n9", 1);
        assertThat(liveness.isDown("n9")).isFalse();
        assertThat(liveness.failsFast("n9")).isFalse();
        assertThat(liveness.phi("n9")).isNaN();
        assertThat(liveness.snapshot()).doesNotContainKey("n9");
        assertThat(changes).isEmpty();
        assertThatThrownBy(() -> liveness.state("n9")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aThresholdThatIsNotAPositiveNumberIsRefused() {
        for (double threshold : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> PeerLiveness.Detection.of(threshold, Duration.ofSeconds(1)))
                    .as("threshold " + threshold).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
