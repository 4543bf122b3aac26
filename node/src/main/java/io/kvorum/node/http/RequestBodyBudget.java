package io.kvorum.node.http;

import io.netty.util.internal.PlatformDependent;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many bytes of request bodies the gateway holds at once, over all of its connections: from
 * a request's headers, which reserve its declared length, to its answer, which frees it. Each
 * connection holds at most a body or two ({@code --max-value-bytes} each); without a bound over
 * all of them, enough clients sending large bodies slowly (or never finishing them) would fill
 * the node's memory and fail everybody's requests. Past the bound, a request is answered 503
 * before its body is read ({@link BodyAdmissionHandler}).
 *
 * <p>Thread-safe, lock-free: connections on every event loop share one.
 */
final class RequestBodyBudget {

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    /** @param limit bytes of bodies held at once, at most */
    RequestBodyBudget(long limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("a body budget must be positive: " + limit);
        }
        this.limit = limit;
    }

    /**
     * The budget of a node: a quarter of the smaller of its heap and its direct memory (a body is
     * received into direct buffers, then copied into the heap), and never less than two of the
     * largest bodies, so that one always fits.
     */
    static RequestBodyBudget forThisProcess(int maxValueBytes) {
        long memory = Math.min(Runtime.getRuntime().maxMemory(), PlatformDependent.maxDirectMemory());
        return new RequestBodyBudget(Math.max(memory / 4, 2L * maxValueBytes));
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
