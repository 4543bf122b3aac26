package io.kvorum.node.time;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task once after a delay unless it is cancelled first: the deadlines of requests, of which
 * a node starts several per request it serves and cancels nearly all before they fire.
 *
 * <p>Contract for implementations used on the request path: {@link #schedule} and
 * {@link Timeout#cancel} are cheap and never wake another thread, so that a deadline costs no
 * context switch; a task may fire somewhat late (by the timer's tick), never early; tasks run on
 * the timer's own thread and must be short and non-blocking.
 */
public interface RequestTimer {

    /** Runs {@code task} after {@code delay} unless the returned handle is cancelled first. */
    Timeout schedule(Runnable task, long delay, TimeUnit unit);

    /** A scheduled task. */
    interface Timeout {
        /** Keeps the task from running if it has not started; idempotent. */
        void cancel();
    }

    /**
     * A timer on a {@link ScheduledExecutorService}: exact, but each schedule may wake the
     * executor's thread. For tests and low-rate uses.
     */
    static RequestTimer of(ScheduledExecutorService executor) {
        return (task, delay, unit) -> {
            ScheduledFuture<?> future = executor.schedule(task, delay, unit);
            return () -> future.cancel(false);
        };
    }
}
