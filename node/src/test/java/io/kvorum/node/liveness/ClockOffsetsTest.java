package io.kvorum.node.liveness;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link ClockOffsets}: what one ping's answer measures, and when a node's own clock is judged off. */
class ClockOffsetsTest {

    private static final long MAX_OFFSET = 500;
    private static final Duration STALE_AFTER = Duration.ofSeconds(10);

    private final ManualClock clock = new ManualClock(1_000_000L);
    private final ClockOffsets offsets = new ClockOffsets(clock, Duration.ofMillis(MAX_OFFSET), STALE_AFTER);

    /**
     * A ping sent now that came back after {@code roundTripMillis}, with the peer's clock
     * {@code offsetMillis} from this node's at the middle of the round trip.
     */
    private void answered(String peer, long offsetMillis, long roundTripMillis) {
        long sentAt = clock.currentTimeMillis();
        offsets.measured(peer, sentAt, TimeUnit.MILLISECONDS.toNanos(roundTripMillis),
                sentAt + roundTripMillis / 2 + offsetMillis);
    }

    @Test
    void anAnswerMeasuresThePeersClockAgainstTheMiddleOfTheRoundTrip() {
        offsets.measured("n2", 1_000_000L, TimeUnit.MILLISECONDS.toNanos(10), 1_006_005L);

        ClockOffsets.Offset o = offsets.offset("n2");
        assertThat(o.millis()).as("peer 1,006,005 against 1,000,005 here").isEqualTo(6_000);
        assertThat(o.uncertaintyMillis()).as("half the round trip, and a millisecond of resolution").isEqualTo(6);
        assertThat(offsets.offset("n3")).as("never measured").isNull();
    }

    @Test
    void aPeerThatDoesNotTellItsClockMeasuresNothing() {
        offsets.measured("n2", 1_000_000L, TimeUnit.MILLISECONDS.toNanos(1), 0);

        assertThat(offsets.offset("n2")).isNull();
    }

    @Test
    void aNodeOffFromBothOfItsPeersRefusesWritesNamingTheirOffsets() {
        answered("n2", -5_000, 2);
        assertThat(offsets.writeRefusal()).as("one peer of two: a tie with itself").isNull();
        answered("n3", -4_990, 2);

        assertThat(offsets.writeRefusal()).contains("--max-clock-offset 500 ms", "n2 -5000 ms", "n3 -4990 ms");
    }

    @Test
    void aNodeOffFromOnlyOneOfItsPeersKeepsWriting() {
        answered("n2", 5_000, 2); // n2's clock is the odd one
        answered("n3", 3, 2);

        assertThat(offsets.writeRefusal()).isNull();
        assertThat(offsets.offset("n2").millis()).isEqualTo(5_000);
        assertThat(offsets.offset("n3").millis()).isEqualTo(3);
    }

    @Test
    void inATwoNodeClusterNeitherCanTellWhoseClockIsWrong() {
        answered("n2", 60_000, 2);

        assertThat(offsets.writeRefusal()).isNull();
        assertThat(offsets.offset("n2").millis()).isEqualTo(60_000);
    }

    @Test
    void aSlowAnswerWidensTheUncertaintyInsteadOfFakingAnOffset() {
        // 900 ms apparent offset, but the answer took 2 s: the true offset may be under 500 ms.
        answered("n2", -900, 2_000);
        answered("n3", -900, 2_000);
        assertThat(offsets.writeRefusal()).isNull();

        answered("n2", -900, 20);
        answered("n3", -900, 20);
        assertThat(offsets.writeRefusal()).as("the same offsets, measured closely").isNotNull();
    }

    @Test
    void writesAreAcceptedAgainOnceTheClockAgreesOrTheReadingsAreStale() {
        answered("n2", 5_000, 2);
        answered("n3", 5_000, 2);
        assertThat(offsets.writeRefusal()).isNotNull();
        answered("n2", 1, 2);
        assertThat(offsets.writeRefusal()).as("n2 agrees again: a tie").isNull();

        answered("n2", 5_000, 2);
        assertThat(offsets.writeRefusal()).isNotNull();
        clock.advance(STALE_AFTER.toMillis() + 1);
        assertThat(offsets.writeRefusal()).as("until the next check").isNotNull();
        offsets.recheck();
        assertThat(offsets.writeRefusal()).as("peers that stopped answering say nothing any more").isNull();
        assertThat(offsets.offset("n2")).isNull();
    }

    @Test
    void theListenerHearsTheRefusalAtOnceAndThenEachChangeOfItOnce() {
        List<String> heard = new ArrayList<>();
        offsets.onRefusalChange(heard::add);
        answered("n2", 5_000, 2);
        answered("n3", 5_000, 2);
        answered("n3", 5_000, 2); // the same refusal: not told again
        answered("n3", 5_001, 2); // new figures: told, so that the next refused write names them
        answered("n3", 0, 2);

        assertThat(heard).hasSize(4);
        assertThat(heard.get(0)).as("at once").isNull();
        assertThat(heard.get(1)).contains("n2 +5000 ms", "n3 +5000 ms");
        assertThat(heard.get(2)).contains("n2 +5000 ms", "n3 +5001 ms");
        assertThat(heard.get(3)).as("n3 agrees again").isNull();
    }

    @Test
    void aMemberThatLeftCountsForNothing() {
        answered("n2", 5_000, 2);
        answered("n3", 5_000, 2);
        offsets.forget("n3");

        assertThat(offsets.writeRefusal()).isNull();
        assertThat(offsets.offset("n3")).isNull();
        assertThat(offsets.offset("n2")).isNotNull();
    }

    @Test
    void aZeroLimitMeasuresButNeverRefuses() {
        ClockOffsets unchecked = new ClockOffsets(clock, Duration.ZERO, STALE_AFTER);
        unchecked.measured("n2", 1_000_000L, 0, 1_000_000L + 3_600_000);
        unchecked.measured("n3", 1_000_000L, 0, 1_000_000L + 3_600_000);

        assertThat(unchecked.writeRefusal()).isNull();
        assertThat(unchecked.offset("n3").millis()).isEqualTo(3_600_000);
    }

    @Test
    void aNodeThatAPeerFindsAheadIsAheadOfAPeerEvenInATie() {
        answered("n2", -5_000, 2);
        assertThat(offsets.writeRefusal()).as("a tie refuses no writes").isNull();
        assertThat(offsets.isAheadOfAPeer()).as("n2's clock 5 s behind this node's").isTrue();

        clock.advance(STALE_AFTER.toMillis() + 1);
        assertThat(offsets.isAheadOfAPeer()).as("once the reading is stale").isFalse();
    }

    @Test
    void aNodeBehindItsPeersOrWithinTheBoundIsNotAheadOfAPeer() {
        answered("n2", 5_000, 2);
        answered("n3", -400, 2);
        assertThat(offsets.isAheadOfAPeer()).isFalse();
        assertThat(new ClockOffsets(clock, Duration.ZERO, STALE_AFTER).isAheadOfAPeer()).as("bound off").isFalse();
    }
}
