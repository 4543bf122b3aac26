package io.kvorum.perf.peers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.HdrHistogram.Recorder;

/**
 * An open loop: requests at a fixed rate, request i due at {@code start + i / rate}, whatever
 * became of the earlier ones. Each request's latency is counted from that intended start, not from
 * when it was sent: a stall (of the system, of the client library, of this sender) delays every
 * request due during it, and all of them show it in the percentiles. This is the correction for
 * coordinated omission that wrk2 makes; a closed loop, or an open loop timing from the send,
 * records one slow request where hundreds were due.
 *
 * <p>At most {@code maxOutstanding} requests are unanswered at once: the next one due waits for an
 * answer (its latency still counted from its intended start), so a system that stops answering
 * holds a bounded number of requests, not the whole schedule.
 */
public final class OpenLoop {

    /** The kind counted for requests still unanswered when the drain ends. */
    static final String UNANSWERED = "no answer by the end of the drain";

    private final long ratePerSecond;
    private final Duration length;
    private final int maxOutstanding;
    private final Duration drain;
    private final int senders;

    /**
     * @param ratePerSecond  requests per second, all of them sent by one thread
     * @param length         how long the schedule runs: {@code rate x length} requests
     * @param maxOutstanding requests unanswered at once before the sender waits
     * @param drain          how long to wait for the answers after the last request was sent
     * @param senders        threads sending, request i from thread i mod senders: a client whose send
     *                       costs CPU on the caller's thread (building a gRPC call, say) is not held to
     *                       one core, nor delayed by one sender's preemption
     */
    public OpenLoop(long ratePerSecond, Duration length, int maxOutstanding, Duration drain, int senders) {
        if (ratePerSecond < 1 || maxOutstanding < 1 || senders < 1 || length.isNegative() || length.isZero()) {
            throw new IllegalArgumentException("rate, length, senders and outstanding requests must be positive");
        }
        this.senders = senders;
        this.ratePerSecond = ratePerSecond;
        this.length = length;
        this.maxOutstanding = maxOutstanding;
        this.drain = drain;
    }

    /**
     * When request {@code index} is due, {@code start} being when request 0 is: computed from the
     * index, not by adding an interval to the previous one, so no rounding accumulates.
     */
    static long intendedStartNanos(long start, long index, long ratePerSecond) {
        return start + Math.multiplyExact(index, 1_000_000_000L) / ratePerSecond;
    }

    /** How many requests the schedule holds. */
    long scheduled() {
        return ratePerSecond * length.toNanos() / 1_000_000_000L;
    }

    /**
     * Sends the schedule from the sender threads, {@code requests} giving each request, then waits at
     * most {@code drain} for the last answers. Those still missing are counted as failures of kind
     * {@link #UNANSWERED}, with their latency so far.
     *
     * @throws IllegalStateException when no request was answered for {@code drain} while
     *                               {@code maxOutstanding} were waiting (every client sets a timeout,
     *                               so this is a client that lost requests)
     */
    public LoadResult run(Supplier<CompletableFuture<?>> requests) throws InterruptedException {
        Semaphore free = new Semaphore(maxOutstanding);
        Recorder latency = new Recorder(ClosedLoop.HIGHEST_NANOS, 3);
        LongAdder answered = new LongAdder();
        Map<String, LongAdder> failures = new ConcurrentHashMap<>();
        Map<Long, Long> unansweredSince = new ConcurrentHashMap<>(); // request index -> intended start
        AtomicReference<RuntimeException> stopped = new AtomicReference<>();
        long count = scheduled();
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < senders; s++) {
            long first = s;
            Thread sender = new Thread(() -> {
                try {
                    for (long i = first; i < count && stopped.get() == null; i += senders) {
                        send(i, intendedStartNanos(start, i, ratePerSecond), requests, free, latency, answered, failures,
                                unansweredSince);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    stopped.compareAndSet(null, e);
                }
            }, "open-loop-sender-" + s);
            sender.setDaemon(true);
            threads.add(sender);
            sender.start();
        }
        try {
            for (Thread t : threads) {
                t.join();
            }
        } finally {
            threads.forEach(Thread::interrupt); // when this thread was interrupted: the senders stop too
        }
        if (stopped.get() != null) {
            throw stopped.get();
        }
        free.tryAcquire(maxOutstanding, drain.toNanos(), TimeUnit.NANOSECONDS);
        long end = System.nanoTime();
        for (Long index : unansweredSince.keySet()) {
            Long intended = unansweredSince.remove(index);
            if (intended != null) { // not answered in the meantime
                latency.recordValue(Math.min(end - intended, ClosedLoop.HIGHEST_NANOS));
                answered.increment();
                failures.computeIfAbsent(UNANSWERED, k -> new LongAdder()).increment();
            }
        }
        Map<String, Long> byKind = new TreeMap<>();
        failures.forEach((k, v) -> byKind.put(k, v.sum()));
        return new LoadResult(answered.sum(), (end - start) / 1e9, byKind, latency.getIntervalHistogram());
    }

    /** Waits until request {@code index} is due and a slot is free, then sends it; its answer is counted from {@code intended}. */
    private void send(long index, long intended, Supplier<CompletableFuture<?>> requests, Semaphore free, Recorder latency,
                      LongAdder answered, Map<String, LongAdder> failures, Map<Long, Long> unansweredSince)
            throws InterruptedException {
        for (long wait = intended - System.nanoTime(); wait > 0; wait = intended - System.nanoTime()) {
            LockSupport.parkNanos(wait);
        }
        if (!free.tryAcquire(drain.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new IllegalStateException(maxOutstanding + " requests still unanswered after " + drain.toSeconds()
                    + " s: the client does not time its requests out");
        }
        unansweredSince.put(index, intended);
        CompletableFuture<?> answer;
        try {
            answer = requests.get();
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((v, e) -> {
            if (unansweredSince.remove(index) == null) {
                return; // counted as unanswered already
            }
            latency.recordValue(Math.min(System.nanoTime() - intended, ClosedLoop.HIGHEST_NANOS));
            answered.increment();
            if (e != null) {
                failures.computeIfAbsent(LoadResult.kindOf(e), k -> new LongAdder()).increment();
            }
            free.release();
        });
    }
}
