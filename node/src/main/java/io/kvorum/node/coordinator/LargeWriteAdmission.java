package io.kvorum.node.coordinator;

import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.util.ProcessMemory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Admission of large writes at their coordinator: a bound on the bytes of large values being
 * written at once, which adapts to how long they take (additive increase, multiplicative decrease,
 * as TCP's congestion window), and a short wait in line for the writes beyond it.
 *
 * <p>Why: a write of a large value costs the cluster milliseconds of copying, replication and
 * storage on every replica, and writes in progress share the cores. When more are in progress than
 * the cluster completes within the request timeout, all of them slow down together: replicas answer
 * after the coordinator gave up, their writes are hinted (the value written again), and nearly every
 * write fails (perf/README.md, large values). Bounded, those admitted stay fast.
 *
 * <p>The bound: a write that completes within half of the request timeout raises it by about one
 * write per bound's worth of completions; one that fails or takes over three quarters of the timeout
 * lowers it by 30%, at most once per half timeout; in between it holds. One large write is always
 * admitted when none is in progress. It never exceeds a ceiling set by the node's memory
 * ({@link #memoryCeiling}): however fast the writes complete, each holds its value several times at
 * the coordinator until its replicas took it.
 *
 * <p>A write's bytes count from its admission until every replica call it made has settled
 * ({@link #released}), not only until its client was answered ({@link #answered}): a write answered
 * {@code 504} still holds its value in the calls to replicas that have not answered yet (up to twice
 * the request timeout, for a late answer that spares a hint), and a client that retries at once
 * sends another. Counted only until the answer, 12 clients writing 4 MiB values through one node of
 * a 3-node cluster with 128 MiB heaps still ran it out of heap: 14 values were held by such calls.
 *
 * <p>The line: a write beyond the bound waits, first come first served, for up to a quarter of the
 * request timeout (the write then has the rest of it); one still waiting then, or that finds
 * {@value #MAX_WAITING} waiting, is refused ({@link OverloadedException}, 503) before any replica
 * does any work. Waiting instead of an immediate refusal matters to clients that retry at once: each
 * retry sends the whole value again.
 *
 * <p>Writes of smaller values are not tracked: the storage queues' bounds keep them in check, and
 * tracking each would cost the common path. Thread-safe; large writes are few enough for one lock.
 * Futures complete on the thread where a write's last replica call settled, or on the timer's.
 */
final class LargeWriteAdmission {

    /** Values of this size and above are large. */
    static final int LARGE_VALUE_BYTES = 64 * 1024;
    /** The bound at start: eight writes of 4 MiB. */
    static final long INITIAL_LIMIT_BYTES = 32L << 20;
    static final int MAX_WAITING = 256;
    private static final long MAX_LIMIT_BYTES = 1L << 30;
    private static final double BACK_OFF = 0.7;

    private final Clock clock;
    private final RequestTimer timer;
    private final long requestTimeoutNanos;
    private final long maxWaitNanos;
    private final long fastNanos;
    private final long slowNanos;
    private final long backOffIntervalNanos;
    private final long ceilingBytes;
    private long limitBytes; // guarded by this
    private long inProgressBytes; // guarded by this
    private int inProgress; // guarded by this
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>(); // guarded by this
    private long lastBackOffNanos; // guarded by this

    /**
     * A large write admitted: {@code budgetNanos} is what is left of its request timeout after its
     * wait. Report it to {@link #answered} once the write is answered, and give it back to
     * {@link #released} once the last of its replica calls has settled.
     */
    record Ticket(long startNanos, int bytes, long budgetNanos) {
    }

    private record Waiter(int bytes, long sinceNanos, CompletableFuture<Ticket> admitted) {
    }

    /** Admission with no ceiling below {@value #MAX_LIMIT_BYTES} bytes; see the full constructor. */
    LargeWriteAdmission(Clock clock, RequestTimer timer, Duration requestTimeout) {
        this(clock, timer, requestTimeout, MAX_LIMIT_BYTES);
    }

    /**
     * @param timer        ends the waits that last too long
     * @param ceilingBytes the most the bound may grow to (and its start, when under the usual start)
     */
    LargeWriteAdmission(Clock clock, RequestTimer timer, Duration requestTimeout, long ceilingBytes) {
        this.ceilingBytes = Math.max(LARGE_VALUE_BYTES, Math.min(MAX_LIMIT_BYTES, ceilingBytes));
        this.limitBytes = Math.min(INITIAL_LIMIT_BYTES, this.ceilingBytes);
        this.clock = clock;
        this.timer = timer;
        this.requestTimeoutNanos = requestTimeout.toNanos();
        this.maxWaitNanos = requestTimeoutNanos / 4;
        this.fastNanos = requestTimeoutNanos / 2;
        this.slowNanos = requestTimeoutNanos * 3 / 4;
        this.backOffIntervalNanos = requestTimeoutNanos / 2;
        this.lastBackOffNanos = clock.nanoTime() - backOffIntervalNanos - 1; // the first may come at once
    }

    /**
     * The ceiling for this process: a quarter of the smaller of its heap and its direct memory (the
     * share the gateway gives request bodies, {@code http.ByteBudget}), divided among the copies a
     * write of replication factor 3 holds at once here: the value in the heap, and the message to
     * each of two remote replicas in direct buffers until their streams took it. Unbounded, 12
     * clients writing 4 MiB values through one node of a 3-node cluster with 128 MiB heaps ran it
     * out of direct memory, then of heap.
     */
    static long memoryCeiling() {
        return ProcessMemory.smallerOfHeapAndDirect() / 4 / 3;
    }

    /** Whether a write of a value of {@code valueBytes} goes through admission. */
    static boolean isLarge(int valueBytes) {
        return valueBytes >= LARGE_VALUE_BYTES;
    }

    /**
     * Admits a write of a large value of {@code valueBytes}: completes with its ticket when it may
     * go, or fails with {@link OverloadedException}.
     */
    CompletableFuture<Ticket> admit(int valueBytes) {
        if (!isLarge(valueBytes)) {
            throw new IllegalArgumentException("not a large value: " + valueBytes + " bytes");
        }
        Waiter waiter;
        synchronized (this) {
            long now = clock.nanoTime();
            if (waiting.isEmpty() && fits(valueBytes)) {
                return CompletableFuture.completedFuture(take(valueBytes, now, now));
            }
            if (waiting.size() >= MAX_WAITING) {
                return CompletableFuture.failedFuture(refusal(MAX_WAITING + " large writes are waiting already"));
            }
            waiter = new Waiter(valueBytes, now, new CompletableFuture<>());
            waiting.add(waiter);
        }
        timer.schedule(() -> expire(waiter), maxWaitNanos, TimeUnit.NANOSECONDS);
        return waiter.admitted();
    }

    /**
     * The write of {@code ticket} was answered, a success or not: how long that took moves the bound.
     * Its bytes stay counted until {@link #released}.
     */
    synchronized void answered(Ticket ticket, boolean succeeded) {
        adapt(ticket, succeeded, clock.nanoTime());
    }

    /** Every replica call of the write of {@code ticket} has settled: its value is no longer held. */
    void released(Ticket ticket) {
        List<Runnable> admitted = new ArrayList<>();
        synchronized (this) {
            inProgress--;
            inProgressBytes -= ticket.bytes();
            long now = clock.nanoTime();
            while (!waiting.isEmpty() && fits(waiting.peek().bytes())) {
                Waiter w = waiting.poll();
                Ticket t = take(w.bytes(), now, w.sinceNanos());
                admitted.add(() -> w.admitted().complete(t));
            }
        }
        admitted.forEach(Runnable::run); // outside the lock: the writes start here
    }

    private void expire(Waiter waiter) {
        boolean removed;
        long waitedNanos;
        synchronized (this) {
            removed = waiting.remove(waiter);
            waitedNanos = clock.nanoTime() - waiter.sinceNanos();
        }
        if (removed) {
            waiter.admitted().completeExceptionally(refusal("a large write waited "
                    + TimeUnit.NANOSECONDS.toMillis(waitedNanos) + " ms for those in progress"));
        }
    }

    private OverloadedException refusal(String why) {
        synchronized (this) {
            return new OverloadedException(why + " (" + mib(inProgressBytes) + " MiB in progress; this node"
                    + " admits " + mib(limitBytes) + " MiB now, a bound that follows how fast they complete)");
        }
    }

    private boolean fits(int bytes) { // guarded by this
        return inProgress == 0 || inProgressBytes + bytes <= limitBytes;
    }

    private Ticket take(int bytes, long now, long arrivedNanos) { // guarded by this
        inProgress++;
        inProgressBytes += bytes;
        return new Ticket(now, bytes, requestTimeoutNanos - (now - arrivedNanos));
    }

    private void adapt(Ticket ticket, boolean succeeded, long now) { // guarded by this
        long tookNanos = now - ticket.startNanos();
        if (!succeeded || tookNanos > slowNanos) {
            if (now - lastBackOffNanos > backOffIntervalNanos) {
                limitBytes = Math.max(LARGE_VALUE_BYTES, (long) (limitBytes * BACK_OFF));
                lastBackOffNanos = now;
            }
        } else if (tookNanos <= fastNanos) {
            long step = Math.max(1, (long) ticket.bytes() * ticket.bytes() / limitBytes);
            limitBytes = Math.min(ceilingBytes, limitBytes + step);
        }
    }

    synchronized long limitBytes() {
        return limitBytes;
    }

    synchronized int inProgress() {
        return inProgress;
    }

    synchronized int waiting() {
        return waiting.size();
    }

    private static long mib(long bytes) {
        return bytes >> 20;
    }
}
