package io.kvorum.node.storage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One writer thread that owns every change to a database, fed by a bounded queue: what callers
 * {@link #offer} is drained in batches of up to {@code maxBatch} items, and each batch is handed
 * to {@link Handler#commit} at once, so that one database write (and one fsync) covers it.
 *
 * <p>Bounds: {@link #offer} never blocks; when the queue is full, or the writer is stopping, it
 * refuses the item at once and the item has had no effect.
 *
 * <p>Threading: the {@link Handler} runs on the writer thread, one call at a time, except that an
 * item offered just as the writer ended is abandoned on the offering thread. An exception escaping
 * the handler is logged and the writer goes on: the handler completes or fails a batch's items
 * itself.
 *
 * <p>Lifecycle: {@link #start} starts the thread; {@link #stop} stops taking items, lets the writer
 * commit what is queued, and waits for it. Every item queued is either committed or
 * {@linkplain Handler#abandon abandoned} exactly once, even one offered while the writer stops.
 */
public final class BatchingWriter<T> {

    private static final Logger log = LoggerFactory.getLogger(BatchingWriter.class);
    /** How long the writer waits for an item before it ticks, or notices it is stopping. */
    private static final long POLL_MILLIS = 100;

    /** The writer thread's side: what to do with the items. */
    public interface Handler<T> {

        /** Writes a batch (never empty, in queue order) and completes or fails each of its items. */
        void commit(List<T> batch);

        /**
         * Fails an item that was queued but will never be committed: the writer has stopped. May
         * run on an offering thread, concurrently with the writer's last calls.
         */
        void abandon(T item);

        /** Called after each batch and after each empty poll: at least every 100 ms while running. */
        default void tick() {
        }

        /** The writer's last call, after every item left in the queue was abandoned. */
        default void stopped() {
        }
    }

    /** What {@link #offer} did with an item. */
    public enum Offer {
        /** Queued: it will be committed or abandoned, exactly once. */
        QUEUED,
        /** Refused, without effect: the queue is full. */
        FULL,
        /** Refused, without effect: the writer is stopping. */
        STOPPING
    }

    private final BlockingQueue<T> queue;
    private final int maxBatch;
    private final Handler<T> handler;
    private final Thread thread;
    private volatile boolean stopping;
    private volatile boolean writerDone;

    /**
     * @param threads       makes the writer thread (named by the caller, see {@code NodeThreads})
     * @param queueCapacity items waiting for the writer, at most
     * @param maxBatch      items in one {@link Handler#commit}, at most
     */
    public BatchingWriter(ThreadFactory threads, int queueCapacity, int maxBatch, Handler<T> handler) {
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
        this.maxBatch = maxBatch;
        this.handler = handler;
        this.thread = threads.newThread(this::writeLoop);
    }

    /** Starts the writer thread. */
    public void start() {
        thread.start();
    }

    /** Queues {@code item} for the writer, unless the queue is full or the writer is stopping. Never blocks. */
    public Offer offer(T item) {
        if (stopping) {
            return Offer.STOPPING;
        }
        if (!queue.offer(item)) {
            return Offer.FULL;
        }
        if (writerDone) {
            // Offered after the writer's last look at the queue: nobody else will abandon it.
            abandonQueued();
        }
        return Offer.QUEUED;
    }

    /** Items waiting for the writer now. */
    public int queued() {
        return queue.size();
    }

    /** Whether {@link #stop} was called: from then on, every offer is refused. */
    public boolean isStopping() {
        return stopping;
    }

    /**
     * Stops taking items and waits up to {@code wait} for the writer to commit what is queued and
     * end. Returns whether it ended; if not (a stuck disk), it is still running and owns the
     * database.
     */
    public boolean stop(Duration wait) throws InterruptedException {
        stopping = true;
        thread.join(wait.toMillis());
        return !thread.isAlive();
    }

    private void writeLoop() {
        List<T> batch = new ArrayList<>(maxBatch);
        while (true) {
            try {
                T first = queue.poll(POLL_MILLIS, TimeUnit.MILLISECONDS);
                if (first != null) {
                    batch.add(first);
                    queue.drainTo(batch, maxBatch - 1);
                    try {
                        handler.commit(batch);
                    } finally {
                        batch.clear();
                    }
                } else if (stopping) {
                    // An offer that saw stopping == false may still queue; it checks writerDone
                    // after queueing, and whichever of us looks last abandons the leftovers.
                    finish();
                    return;
                }
                handler.tick();
            } catch (InterruptedException e) {
                finish();
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.error("{} failed; continuing", Thread.currentThread().getName(), e);
            }
        }
    }

    private void finish() {
        writerDone = true;
        abandonQueued();
        handler.stopped();
    }

    private void abandonQueued() {
        T item;
        while ((item = queue.poll()) != null) {
            handler.abandon(item);
        }
    }
}
