package io.kvorum.node.storage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One writer thread that commits every change to a database, fed by a bounded queue: what callers
 * {@link #offer} is drained in batches of up to {@code maxBatch} items, and each batch is handed
 * to {@link Handler#commit} at once, so that one database write (and one fsync) covers it. With
 * {@link #offerOrCommit}, an item that finds the writer idle is committed by its caller instead.
 *
 * <p>Bounds: {@link #offer} never blocks; when the queue is full, or the writer is stopping, it
 * refuses the item at once and the item has had no effect.
 *
 * <p>Threading: {@link Handler#commit} runs one call at a time, under one lock: on the writer
 * thread, or on a thread in {@link #offerOrCommit}. {@link Handler#tick} runs on the writer thread
 * only, outside that lock, so it may overlap an inline commit: a handler whose tick shares state
 * with its commits must not be used with {@link #offerOrCommit}. {@link Handler#abandon} may also
 * run on an offering thread, for an item offered just as the writer ended. An exception escaping
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
        STOPPING,
        /** Committed on the offering thread ({@link #offerOrCommit}). */
        COMMITTED
    }

    private final BlockingQueue<T> queue;
    private final int maxBatch;
    private final Handler<T> handler;
    private final Thread thread;
    /** Held around every {@link Handler#commit}, so that commits stay one at a time on any thread. */
    private final ReentrantLock committing = new ReentrantLock();
    /** Items offered and not yet committed or abandoned: queued, or in the writer's hands. */
    private final AtomicInteger uncommitted = new AtomicInteger();
    /** When {@link #offerOrCommit} only offers: for a while after a slow inline commit. */
    private final InlinePause inline = new InlinePause();
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
        uncommitted.incrementAndGet();
        if (!queue.offer(item)) {
            uncommitted.decrementAndGet();
            return Offer.FULL;
        }
        if (writerDone) {
            // Offered after the writer's last look at the queue: nobody else will abandon it.
            abandonQueued();
        }
        return Offer.QUEUED;
    }

    /**
     * Commits {@code item} at once on the calling thread, as a batch of one, when nothing is
     * queued or being committed; otherwise {@linkplain #offer offers} it. Either way no item
     * offered earlier by the same thread is committed after it.
     *
     * <p>For callers whose commit is short (no fsync): an idle writer then costs no hand-off to
     * its thread and back, while under load items still queue and share a batch. A commit here
     * that takes over 0.5 ms (the database stalled) sends every item to the writer thread for the
     * next second ({@link InlinePause}), so that a stall holds the writer, not the callers' threads.
     */
    public Offer offerOrCommit(T item) {
        if (!stopping && uncommitted.get() == 0 && !inline.paused(System.nanoTime()) && committing.tryLock()) {
            try {
                // Checked again under the lock: an item polled by the writer but not yet
                // committed still counts, so this one cannot overtake it.
                if (!stopping && uncommitted.compareAndSet(0, 1)) {
                    long start = System.nanoTime();
                    commit(List.of(item));
                    long took = System.nanoTime() - start;
                    if (inline.ran(start, took)) {
                        log.debug("an inline commit took {} ms; the writer thread commits alone for a while",
                                TimeUnit.NANOSECONDS.toMillis(took));
                    }
                    return Offer.COMMITTED;
                }
            } finally {
                committing.unlock();
            }
        }
        return offer(item);
    }

    /** The item that has waited longest for the writer, or null when none waits. */
    public T oldestQueued() {
        return queue.peek();
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
                    committing.lock();
                    try {
                        batch.add(first);
                        queue.drainTo(batch, maxBatch - 1);
                        commit(batch);
                    } finally {
                        committing.unlock();
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

    /** Commits under {@link #committing}; the items are no longer uncommitted whatever happens. */
    private void commit(List<T> batch) {
        try {
            handler.commit(batch);
        } catch (RuntimeException e) {
            log.error("{}: committing {} items failed", Thread.currentThread().getName(), batch.size(), e);
        } finally {
            uncommitted.addAndGet(-batch.size());
        }
    }

    /**
     * Ends the writer. Under the lock, so that an inline commit in progress ends first: once the
     * writer has ended ({@link #stop} returned true), nothing commits and the caller may close the
     * database; no inline commit starts after, as each checks {@code stopping} under the lock.
     */
    private void finish() {
        committing.lock();
        try {
            writerDone = true;
            abandonQueued();
            handler.stopped();
        } finally {
            committing.unlock();
        }
    }

    private void abandonQueued() {
        T item;
        while ((item = queue.poll()) != null) {
            uncommitted.decrementAndGet();
            handler.abandon(item);
        }
    }
}
