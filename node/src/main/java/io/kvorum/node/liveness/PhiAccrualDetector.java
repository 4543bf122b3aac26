package io.kvorum.node.liveness;

import java.time.Duration;

/**
 * The phi-accrual failure detector of one peer (Hayashibara et al., as in Cassandra and Akka): from
 * the intervals observed between the peer's heartbeat answers it estimates how unlikely the current
 * silence is, as {@code phi = -log10(P(an interval at least this long))}. Phi 1 means a 10%
 * chance that the peer is merely late, phi 8 one in 10^8. A steady peer is suspected soon after
 * its usual interval has passed; a peer whose answers come irregularly (a loaded node, a busy
 * network) is given proportionally more time.
 *
 * <p>The intervals are modelled as a normal distribution over the last {@link #WINDOW} samples, with
 * two guards: its standard deviation is at least {@code minStdDeviation} (a perfectly regular
 * history would otherwise suspect a peer 1 ms late), and {@code acceptablePause} is added to its
 * mean (a single lost heartbeat is not suspicious). Before the first interval is measured, the
 * history holds the expected interval with a deviation of a quarter of it.
 *
 * <p>Not thread-safe: {@link PeerLiveness} calls it under the peer's lock.
 */
final class PhiAccrualDetector {

    /** Intervals remembered: about three minutes of heartbeats at the default interval. */
    static final int WINDOW = 200;

    private final long acceptablePauseNanos;
    private final double minStdDeviationNanos;
    private final long[] intervals = new long[WINDOW];
    private int count;
    private int next;
    private double sum;
    private double sumOfSquares;

    /**
     * @param expectedInterval how often the peer is pinged: the history's first guess
     * @param acceptablePause  a silence this much longer than usual is not suspicious yet
     * @param minStdDeviation  the least deviation the model assumes
     */
    PhiAccrualDetector(Duration expectedInterval, Duration acceptablePause, Duration minStdDeviation) {
        if (expectedInterval.isNegative() || expectedInterval.isZero()) {
            throw new IllegalArgumentException("the expected interval must be positive");
        }
        this.acceptablePauseNanos = acceptablePause.toNanos();
        this.minStdDeviationNanos = Math.max(1, minStdDeviation.toNanos());
        long mean = expectedInterval.toNanos();
        long deviation = mean / 4;
        add(mean - deviation); // mean and deviation as given
        add(mean + deviation);
    }

    /** One interval between two heartbeat answers. */
    void add(long intervalNanos) {
        if (count == WINDOW) {
            long dropped = intervals[next];
            sum -= dropped;
            sumOfSquares -= (double) dropped * dropped;
        } else {
            count++;
        }
        intervals[next] = intervalNanos;
        next = (next + 1) % WINDOW;
        sum += intervalNanos;
        sumOfSquares += (double) intervalNanos * intervalNanos;
    }

    double meanNanos() {
        return sum / count;
    }

    double stdDeviationNanos() {
        double mean = meanNanos();
        double variance = Math.max(0, sumOfSquares / count - mean * mean);
        return Math.max(minStdDeviationNanos, Math.sqrt(variance));
    }

    /** Phi after {@code silenceNanos} without an answer: 0 for a fresh answer, growing without bound. */
    double phi(long silenceNanos) {
        return phi(silenceNanos, meanNanos() + acceptablePauseNanos, stdDeviationNanos());
    }

    /**
     * {@code -log10} of the probability that a normal variable of this mean and deviation exceeds
     * {@code x}, with the logistic approximation of the normal CDF that Akka uses (error below
     * 0.0002 over the whole range, and no underflow to a probability of 1 for a large silence).
     */
    static double phi(double x, double mean, double stdDeviation) {
        double y = (x - mean) / stdDeviation;
        double e = Math.exp(-y * (1.5976 + 0.070566 * y * y));
        if (x > mean) {
            return -Math.log10(e / (1.0 + e));
        }
        return -Math.log10(1.0 - 1.0 / (1.0 + e));
    }
}
