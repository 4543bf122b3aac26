package io.kvorum.node.liveness;

import static io.kvorum.node.liveness.PeerLiveness.State.DOWN;
import static io.kvorum.node.liveness.PeerLiveness.State.UNKNOWN;
import static io.kvorum.node.liveness.PeerLiveness.State.UP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.liveness.PeerLiveness.PeerStatus;
import io.kvorum.node.time.ManualClock;
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
        liveness = new PeerLiveness(List.of("n2", "n3"), clock, 2);
        liveness.addListener(new PeerLiveness.Listener() {
            @Override
            public void peerUp(String peer) {
                changes.add(peer + " up");
            }

            @Override
            public void peerDown(String peer) {
                changes.add(peer + " down");
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

    @Test
    void anUpPeerIsDownOnlyAfterTwoMissedHeartbeatsInARow() {
        liveness.answered("n2", 1_000);
        clock.advance(1_000);
        liveness.missed("n2");
        // one miss: a slow moment, still up
        assertPeer("n2", UP, START);
        liveness.answered("n2", 1_000);
        clock.advance(1_000);
        liveness.missed("n2");
        // an answer in between reset the count: still up
        assertPeer("n2", UP, START);
        clock.advance(1_000);
        liveness.missed("n2");
        // two in a row: down
        assertPeer("n2", DOWN, START + 3_000);
        liveness.missed("n2");
        assertPeer("n2", DOWN, START + 3_000);
        liveness.answered("n2", 1_000);
        clock.advance(1_000);
        liveness.missed("n2");
        // back up, and the count starts again from zero
        assertPeer("n2", UP, START + 3_000);
        assertThat(changes).containsExactly("n2 up", "n2 down", "n2 up");
    }

    @Test
    void anUnknownPeerIsDownAfterOneMissedHeartbeat() {
        clock.advance(5);
        liveness.missed("n3");
        assertPeer("n3", DOWN, START + 5);
        assertThat(changes).containsExactly("n3 down");
    }

    @Test
    void reportsAboutIdsThatAreNotPeersAreIgnored() {
        liveness.answered("n9", 1);
        liveness.unreachable("n9");
        liveness.missed("n9");
        assertThat(liveness.isDown("n9")).isFalse();
        assertThat(liveness.snapshot()).doesNotContainKey("n9");
        assertThat(changes).isEmpty();
        assertThatThrownBy(() -> liveness.state("n9")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aThresholdBelowOneIsRefused() {
        assertThatThrownBy(() -> new PeerLiveness(List.of("n2"), clock, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
