package io.kvorum.perf.search;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Bisection for the highest fixed rate the target sustains within a latency bound. A step at rate
 * R passes when its p99 is at most the bound, it had no errors (non-2xx or socket) and it achieved
 * at least {@link #MIN_ACHIEVED_SHARE} of R. Between a passing {@code lo} (initially 0) and a failing
 * {@code hi} (initially --max-rate, assumed to fail until measured) it measures the middle, and
 * stops when {@code hi - lo < 5% of lo} or after {@code maxSteps} steps.
 */
public final class RateSearch {

    public static final double MIN_ACHIEVED_SHARE = 0.95;
    public static final double PRECISION = 0.05;

    /** What one step measured. */
    public record Step(int rate, double achieved, double p50Ms, double p99Ms, long errors, boolean passed) {}

    /** Measures one step at a fixed rate; a real one runs wrk2 for --step-duration. */
    @FunctionalInterface
    public interface Measurement {
        Step measure(int rate) throws Exception;
    }

    /** The steps in order, and the highest passing rate (0 when none passed). */
    public record Outcome(List<Step> steps, int sustainedRate) {}

    private final double p99BoundMs;
    private final int maxRate;
    private final int maxSteps;

    public RateSearch(double p99BoundMs, int maxRate, int maxSteps) {
        if (maxRate < 1 || maxSteps < 1) {
            throw new IllegalArgumentException("maxRate and maxSteps must be positive");
        }
        this.p99BoundMs = p99BoundMs;
        this.maxRate = maxRate;
        this.maxSteps = maxSteps;
    }

    /** Whether a step with these figures passes. */
    public boolean passes(int rate, double achieved, double p99Ms, long errors) {
        return p99Ms <= p99BoundMs && errors == 0 && achieved >= MIN_ACHIEVED_SHARE * rate;
    }

    /**
     * Runs the search. {@code firstRate} (0: the middle of 0..maxRate) is the first rate tried;
     * {@code onStep} sees each step as it ends.
     */
    public Outcome search(int firstRate, Measurement measurement, Consumer<Step> onStep) throws Exception {
        int lo = 0;
        int hi = maxRate + 1;
        List<Step> steps = new ArrayList<>();
        int rate = firstRate > 0 ? Math.min(firstRate, maxRate) : Math.max(1, maxRate / 2);
        while (steps.size() < maxSteps) {
            Step measured = measurement.measure(rate);
            Step step = new Step(rate, measured.achieved(), measured.p50Ms(), measured.p99Ms(), measured.errors(),
                    passes(rate, measured.achieved(), measured.p99Ms(), measured.errors()));
            steps.add(step);
            onStep.accept(step);
            if (step.passed()) {
                lo = rate;
            } else {
                hi = rate;
            }
            if (lo >= maxRate || (lo > 0 && hi - lo < PRECISION * lo) || hi <= 1) {
                break;
            }
            rate = lo + (hi - lo) / 2;
            if (rate == lo || rate == hi) {
                break;
            }
        }
        return new Outcome(List.copyOf(steps), lo);
    }
}
