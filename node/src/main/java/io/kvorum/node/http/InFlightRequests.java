package io.kvorum.node.http;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The requests in progress over all of the gateway's connections, counted from when a connection
 * starts one to when its answer is written (or the connection closes), and a way to wait until
 * there are none, which a graceful stop uses.
 *
 * <p>Thread-safe; counting costs no lock. {@link #awaitNone} returns as soon as the count is zero
 * at some moment after it was called: requests may start again afterwards.
 */
final class InFlightRequests {

    private final AtomicInteger count = new AtomicInteger();
    /** Completed the next time the count reaches zero; null until somebody waits. */
    private final AtomicReference<CompletableFuture<Void>> none = new AtomicReference<>();

    void started() {
        count.incrementAndGet();
    }

    void finished() {
        if (count.decrementAndGet() == 0) {
            CompletableFuture<Void> waiting = none.get();
            if (waiting != null) {
                waiting.complete(null);
            }
        }
    }

    int count() {
        return count.get();
    }

    /** Waits up to {@code bound} for a moment with no request in progress; false if none came. */
    boolean awaitNone(Duration bound) throws InterruptedException {
        CompletableFuture<Void> drained = none.updateAndGet(f -> f != null && !f.isDone() ? f : new CompletableFuture<>());
        // After publishing the future: a finish that reached zero before it was published is seen here.
        if (count.get() == 0) {
            drained.complete(null);
        }
        try {
            drained.get(bound.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new AssertionError("never completed exceptionally", e);
        }
    }
}
