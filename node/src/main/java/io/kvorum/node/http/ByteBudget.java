package io.kvorum.node.http;

import io.kvorum.node.util.ProcessMemory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many bytes of bodies the gateway holds at once, over all of its connections. The gateway
 * keeps two: one for request bodies, from a request's headers, which reserve its declared length,
 * to its answer ({@link BodyAdmissionHandler}); one for answer bodies, from the moment an answer
 * is written to the moment its last byte has gone to the socket ({@link ConnectionHandler}). Each
 * connection holds at most a body or two of {@code --max-value-bytes} each; without a bound over
 * all of them, enough clients sending large bodies slowly, or asking for large values and not
 * reading them, would fill the node's memory and fail everybody's requests. Past the bound, a
 * request is answered 503.
 *
 * <p>Thread-safe, lock-free: connections on every event loop share one.
 */
final class ByteBudget {

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    /** @param limit bytes of bodies held at once, at most */
    ByteBudget(long limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("a byte budget must be positive: " + limit);
        }
        this.limit = limit;
    }

    /**
     * A budget of a node: a quarter of the smaller of its heap and its direct memory (a request body
     * is received into direct buffers, then copied into the heap; an answer is copied from the heap
     * into direct buffers to be sent), and never less than two of the largest bodies, so that one
     * always fits.
     */
    static ByteBudget forThisProcess(int maxValueBytes) {
        long memory = ProcessMemory.smallerOfHeapAndDirect();
        return new ByteBudget(Math.max(memory / 4, 2L * maxValueBytes));
    }

    /** Takes {@code bytes} from the budget if they fit in what is left; false (and nothing taken) if not. */
    boolean tryReserve(long bytes) {
        if (bytes == 0) {
            return true;
        }
        long now;
        do {
            now = held.get();
            if (now + bytes > limit) {
                return false;
            }
        } while (!held.compareAndSet(now, now + bytes));
        return true;
    }

    /**
     * Turns a reservation of {@code reserved} bytes into one of {@code actual}: what the estimate
     * took beyond the actual size goes back, and an actual size beyond it is taken even if it does
     * not fit (it is already in memory).
     */
    void resize(long reserved, long actual) {
        if (reserved != actual) {
            held.addAndGet(actual - reserved);
        }
    }

    /** Gives back what a {@link #tryReserve} took. */
    void release(long bytes) {
        if (bytes != 0) {
            held.addAndGet(-bytes);
        }
    }

    long held() {
        return held.get();
    }

    long limit() {
        return limit;
    }
}
