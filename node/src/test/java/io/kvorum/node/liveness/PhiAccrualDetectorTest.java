package io.kvorum.node.liveness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Phi over synthetic sequences of intervals between heartbeat answers. */
class PhiAccrualDetectorTest {

    private static final long MS = 1_000_000L;

    /** The node's defaults: 1 s heartbeats, one lost heartbeat acceptable, deviation at least 200 ms. */
    private static PhiAccrualDetector detector() {
        return new PhiAccrualDetector(Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofMillis(200));
    }

    /** The first silence, in steps of 10 ms, at which phi reaches {@code threshold}. */
    private static long silenceToReachMillis(PhiAccrualDetector d, double threshold) {
        for (long ms = 0; ms < 600_000; ms += 10) {
            if (d.phi(ms * MS) >= threshold) {
                return ms;
            }
        }
        throw new AssertionError("phi never reached " + threshold);
    }

    @Test
    void theApproximationMatchesTheNormalTail() {
        // -log10 of the upper tail of a standard normal at 0, 1, 2 and 3 deviations
        assertThat(PhiAccrualDetector.phi(0, 0, 1)).isCloseTo(-Math.log10(0.5), within(0.01));
        assertThat(PhiAccrualDetector.phi(1, 0, 1)).isCloseTo(-Math.log10(0.158655), within(0.01));
        assertThat(PhiAccrualDetector.phi(2, 0, 1)).isCloseTo(-Math.log10(0.0227501), within(0.02));
        assertThat(PhiAccrualDetector.phi(3, 0, 1)).isCloseTo(-Math.log10(0.0013499), within(0.06));
        assertThat(PhiAccrualDetector.phi(-5, 0, 1)).as("well before the mean").isCloseTo(0, within(0.001));
        assertThat(PhiAccrualDetector.phi(1e6, 0, 1)).as("a long silence, no underflow to 0").isInfinite();
    }

    @Test
    void steadyArrivalsKeepPhiLowUntilTheUsualIntervalAndAPauseHavePassed() {
        PhiAccrualDetector d = detector();
        for (int i = 0; i < 100; i++) {
            d.add(1_000 * MS);
        }
        assertThat(d.phi(0)).as("just answered").isLessThan(0.01);
        assertThat(d.phi(1_000 * MS)).as("at the usual interval").isLessThan(0.01);
        assertThat(d.phi(2_000 * MS)).as("one heartbeat lost").isCloseTo(-Math.log10(0.5), within(0.01));
        // mean 1 s + pause 1 s + 5.22 deviations of 200 ms (the floor): about 3.04 s
        assertThat(silenceToReachMillis(d, 8)).isBetween(3_000L, 3_100L);
    }

    @Test
    void aSilenceCrossesTheThresholdAtTheExpectedTimeAndPhiOnlyGrows() {
        PhiAccrualDetector d = detector();
        Random random = new Random(55);
        for (int i = 0; i < PhiAccrualDetector.WINDOW; i++) {
            d.add((1_000 + random.nextInt(21) - 10) * MS); // 1 s +- 10 ms
        }
        double mean = d.meanNanos() + 1_000 * MS;
        double deviation = d.stdDeviationNanos();
        assertThat(deviation).as("a regular history is given the floor").isEqualTo(200 * MS);
        long expected = (long) ((mean + 5.22 * deviation) / MS);
        assertThat(silenceToReachMillis(d, 8)).isBetween(expected - 30, expected + 30);
        double previous = 0;
        for (long ms = 0; ms <= 10_000; ms += 100) {
            double phi = d.phi(ms * MS);
            assertThat(phi).as("phi at " + ms + " ms").isGreaterThanOrEqualTo(previous);
            previous = phi;
        }
        assertThat(previous).as("after 10 s").isGreaterThan(8);
    }

    @Test
    void jitteryArrivalsRaiseTheTolerance() {
        PhiAccrualDetector steady = detector();
        PhiAccrualDetector jittery = detector();
        Random random = new Random(7);
        for (int i = 0; i < PhiAccrualDetector.WINDOW; i++) {
            steady.add(1_000 * MS);
            jittery.add((500 + random.nextInt(1_500)) * MS); // 0.5 to 2 s, as behind a loaded node
        }
        long steadyMs = silenceToReachMillis(steady, 8);
        long jitteryMs = silenceToReachMillis(jittery, 8);
        assertThat(jitteryMs).as("silence tolerated with jitter, vs " + steadyMs + " ms steady")
                .isGreaterThan(steadyMs + 1_000);
        assertThat(jittery.phi(3_500 * MS)).as("3.5 s: suspicious if steady, not if jittery").isLessThan(4);
        assertThat(steady.phi(3_500 * MS)).isGreaterThan(8);
    }

    @Test
    void theHistoryForgetsOldIntervals() {
        PhiAccrualDetector d = detector();
        for (int i = 0; i < PhiAccrualDetector.WINDOW; i++) {
            d.add(5_000 * MS);
        }
        assertThat(d.phi(5_500 * MS)).as("used to a slow rhythm").isLessThan(1);
        for (int i = 0; i < PhiAccrualDetector.WINDOW; i++) {
            d.add(1_000 * MS);
        }
        assertThat(d.meanNanos()).isEqualTo(1_000.0 * MS);
        assertThat(d.phi(5_500 * MS)).as("after a window of 1 s intervals").isGreaterThan(8);
    }

    @Test
    void beforeAnyIntervalTheExpectedOneIsAssumed() {
        PhiAccrualDetector d = detector();
        assertThat(d.meanNanos()).isEqualTo(1_000.0 * MS);
        assertThat(d.stdDeviationNanos()).isEqualTo(250.0 * MS);
        assertThat(silenceToReachMillis(d, 8)).as("2 s + 5.22 * 250 ms").isBetween(3_250L, 3_350L);
        assertThatThrownBy(() -> new PhiAccrualDetector(Duration.ZERO, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
