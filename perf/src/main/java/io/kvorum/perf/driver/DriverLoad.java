package io.kvorum.perf.driver;

import io.kvorum.client.KvorumClient;
import io.kvorum.perf.load.Workload;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A closed-loop load through the Java driver from this one JVM: {@code inFlight} lanes, each
 * sending its next request the moment the previous one is answered, for a fixed time, over the
 * key space key0..key{N-1} of the wrk scripts (uniform). It measures what the driver can push, as
 * Debian's wrk does for HTTP; latencies are service times (not corrected for coordinated omission).
 *
 * <p>A lane issues its next request from the thread that completed the previous one (a driver
 * event loop); an answer that is already there when the lane looks is handled in a loop, not by
 * recursion, so a node that refuses every request at once cannot overflow the stack.
 */
public final class DriverLoad {

    /** What to send. {@code ack}/{@code from} 0 = the node's defaults. */
    public record Spec(Workload workload, int keys, int valueBytes, double readRatio, int ack, int from, int inFlight) {
        public Spec {
            Objects.requireNonNull(workload, "workload");
            if (workload == Workload.DELETE) {
                throw new IllegalArgumentException("the driver load sends put, get or mixed, not delete");
            }
            if (keys < 1 || valueBytes < 0 || inFlight < 1) {
                throw new IllegalArgumentException("keys and in-flight must be positive, value bytes not negative");
            }
        }

        /** "put, 64 in flight, keys key0..key99999 uniform, 256-byte values, the node's quorum". */
        public String describe() {
            return workload.name().toLowerCase() + (workload == Workload.MIXED ? " (reads " + readRatio + ")" : "") + ", "
                    + inFlight + " in flight, keys key0..key" + (keys - 1) + " uniform, " + valueBytes + "-byte values, "
                    + (ack > 0 ? "ack " + ack + " from " + from : "the node's quorum");
        }
    }

    /**
     * One measured stretch.
     *
     * @param requests   answered requests (successes and failures)
     * @param failures   failed requests by the exception's simple class name ("OverloadedException" ...)
     * @param latencyNs  every answer's time from send to completion, successes and failures
     */
    public record Result(long requests, double seconds, Map<String, Long> failures, Histogram latencyNs) {
        public double requestsPerSec() {
            return seconds <= 0 ? 0 : requests / seconds;
        }

        public long failureCount() {
            return failures.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    private final KvorumClient client;
    private final Spec spec;
    private final byte[] value;
    private final KvorumClient.Options options;

    public DriverLoad(KvorumClient client, Spec spec) {
        this.client = client;
        this.spec = spec;
        this.value = new byte[spec.valueBytes()];
        ThreadLocalRandom.current().nextBytes(value);
        this.options = spec.ack() > 0 ? KvorumClient.Options.quorum(spec.ack(), spec.from()) : KvorumClient.Options.DEFAULT;
    }

    /**
     * Runs the load for {@code length}, then waits (at most {@code drain}) for the requests still
     * in flight. Only answers to requests sent within {@code length} count.
     */
    public Result run(Duration length, Duration drain) throws InterruptedException {
        Run run = new Run(System.nanoTime() + length.toNanos());
        long start = System.nanoTime();
        for (int i = 0; i < spec.inFlight(); i++) {
            run.lane();
        }
        if (!run.lanesDone.await(length.toNanos() + drain.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new IllegalStateException(run.lanesDone.getCount() + " of " + spec.inFlight()
                    + " lanes still waiting for an answer " + drain.toSeconds() + " s after the end");
        }
        double seconds = (Math.min(System.nanoTime(), run.deadline) - start) / 1e9;
        Map<String, Long> failures = new java.util.TreeMap<>();
        run.failures.forEach((k, v) -> failures.put(k, v.sum()));
        return new Result(run.answered.sum(), seconds, failures, run.latency.getIntervalHistogram());
    }

    private CompletableFuture<?> send() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String key = "key" + random.nextInt(spec.keys());
        boolean read = switch (spec.workload()) {
            case GET -> true;
            case MIXED -> random.nextDouble() < spec.readRatio();
            default -> false;
        };
        return read ? client.get(key, options) : client.put(key, value, options);
    }

    /** The state of one {@link #run}. */
    private final class Run {
        final long deadline;
        final Recorder latency = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
        final LongAdder answered = new LongAdder();
        final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
        final CountDownLatch lanesDone = new CountDownLatch(spec.inFlight());

        Run(long deadline) {
            this.deadline = deadline;
        }

        /** Sends until a request is pending (then its completion carries on), or the time is up. */
        void lane() {
            while (true) {
                long sent = System.nanoTime();
                if (sent >= deadline) {
                    lanesDone.countDown();
                    return;
                }
                CompletableFuture<?> answer = send();
                if (!answer.isDone()) {
                    answer.whenComplete((v, e) -> {
                        record(sent, e);
                        lane();
                    });
                    return;
                }
                record(sent, answer.handle((v, e) -> e).join());
            }
        }

        void record(long sent, Throwable failure) {
            long now = System.nanoTime();
            latency.recordValue(Math.min(now - sent, TimeUnit.SECONDS.toNanos(60)));
            answered.increment();
            if (failure != null) {
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                failures.computeIfAbsent(cause.getClass().getSimpleName(), k -> new LongAdder()).increment();
            }
        }
    }
}
