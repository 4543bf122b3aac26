package io.kvorum.perf.peers;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.HdrHistogram.Recorder;

/**
 * A closed loop: {@code inFlight} lanes, each sending its next request the moment the previous one is
 * answered, until a deadline or until the requests run out. What it measures is throughput; its
 * latencies are service times (a closed loop waits for the system, so they are not corrected for
 * coordinated omission: {@link OpenLoop} is).
 *
 * <p>A lane sends its next request from the thread that completed the previous one (a client's
 * event loop); an answer already there when the lane looks is handled in a loop, not by recursion,
 * so a system that fails every request at once cannot overflow the stack.
 */
public final class ClosedLoop {

    /** Latencies above this are recorded as this (a client times a request out well before). */
    static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final int inFlight;

    public ClosedLoop(int inFlight) {
        if (inFlight < 1) {
            throw new IllegalArgumentException("in flight must be positive, got " + inFlight);
        }
        this.inFlight = inFlight;
    }

    /**
     * Sends {@code requests} until {@code length} has passed or it returns null (no more work), then
     * waits at most {@code drain} for the answers still due.
     *
     * @throws IllegalStateException when answers are still missing after the drain (a client that
     *                               never completes a request: a bug, as each has a timeout)
     */
    public LoadResult run(Supplier<CompletableFuture<?>> requests, Duration length, Duration drain) throws InterruptedException {
        long start = System.nanoTime();
        Run run = new Run(requests, start + length.toNanos(), inFlight);
        for (int i = 0; i < inFlight; i++) {
            run.laneLoop();
        }
        if (!run.lanesDone.await(length.toNanos() + drain.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new IllegalStateException(run.lanes.get() + " of " + inFlight
                    + " lanes still waiting for an answer " + drain.toSeconds() + " s after the end");
        }
        double seconds = (Math.min(System.nanoTime(), run.lastAnswer()) - start) / 1e9;
        Map<String, Long> failures = new TreeMap<>();
        run.failures.forEach((k, v) -> failures.put(k, v.sum()));
        return new LoadResult(run.answered.sum(), seconds, failures, run.latency.getIntervalHistogram());
    }

    private static final class Run {
        final Supplier<CompletableFuture<?>> requests;
        final long deadline;
        final Recorder latency = new Recorder(HIGHEST_NANOS, 3);
        final LongAdder answered = new LongAdder();
        final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
        final CountDownLatch lanesDone = new CountDownLatch(1);
        /** Lanes that have not ended yet; the last to end opens {@link #lanesDone}. */
        final AtomicInteger lanes;
        volatile long lastAnswer;

        Run(Supplier<CompletableFuture<?>> requests, long deadline, int lanes) {
            this.requests = requests;
            this.deadline = deadline;
            this.lanes = new AtomicInteger(lanes);
        }

        long lastAnswer() {
            return lastAnswer == 0 ? System.nanoTime() : lastAnswer;
        }

        /** Sends until a request is pending (then its completion carries on), or the work is done. */
        void laneLoop() {
            while (true) {
                long sent = System.nanoTime();
                CompletableFuture<?> answer = sent >= deadline ? null : next();
                if (answer == null) {
                    if (lanes.decrementAndGet() == 0) {
                        lanesDone.countDown();
                    }
                    return;
                }
                if (!answer.isDone()) {
                    answer.whenComplete((v, e) -> {
                        record(sent, e);
                        laneLoop();
                    });
                    return;
                }
                record(sent, answer.handle((v, e) -> e).join());
            }
        }

        private CompletableFuture<?> next() {
            try {
                return requests.get();
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        void record(long sent, Throwable failure) {
            long now = System.nanoTime();
            latency.recordValue(Math.min(now - sent, HIGHEST_NANOS));
            answered.increment();
            lastAnswer = now;
            if (failure != null) {
                failures.computeIfAbsent(LoadResult.kindOf(failure), k -> new LongAdder()).increment();
            }
        }
    }
}
