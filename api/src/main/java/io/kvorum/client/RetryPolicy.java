package io.kvorum.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How often and how soon a call is tried again. A call is retried (on another healthy endpoint
 * when there is one) only when it certainly had no effect or is idempotent:
 * <ul>
 *   <li>a {@code 503} answer: after the node's {@code Retry-After}, capped at {@link #maxBackoff()},
 *       else after the exponential backoff;</li>
 *   <li>a failure to connect ({@link java.net.ConnectException}) or a connection lost mid-request
 *       ({@link KvorumConnectionException}): after the backoff. GET, PUT and DELETE are idempotent:
 *       a PUT writes the value it names, but the coordinator assigns its timestamp, so a retried
 *       PUT may store the same value again under a newer timestamp.</li>
 * </ul>
 * Nothing else is retried (no 504, no 4xx, no timeout). Every call stops at {@link #maxAttempts()}
 * attempts, and no retry is scheduled that would start after the call's deadline.
 *
 * @param maxAttempts attempts in all, at least 1 (1 = no retries)
 * @param baseBackoff the delay before the second attempt; each further one doubles it, with jitter
 * @param maxBackoff  the largest delay, also the cap on a node's {@code Retry-After}
 */
public record RetryPolicy(int maxAttempts, Duration baseBackoff, Duration maxBackoff) {

    /** No retries: one attempt per call. */
    public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO);
    /** Three attempts, 50 ms then 100 ms apart (with jitter), {@code Retry-After} capped at 1 s. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(3, Duration.ofMillis(50), Duration.ofSeconds(1));

    public RetryPolicy {
        Objects.requireNonNull(baseBackoff, "baseBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        if (baseBackoff.isNegative() || maxBackoff.compareTo(baseBackoff) < 0) {
            throw new IllegalArgumentException("backoffs must satisfy 0 <= baseBackoff <= maxBackoff");
        }
    }

    /** The delay after failed attempt number {@code attempt} (1-based): half fixed, half random. */
    Duration backoff(int attempt) {
        long base = baseBackoff.toNanos() << Math.min(attempt - 1, 30);
        long capped = base < 0 ? maxBackoff.toNanos() : Math.min(base, maxBackoff.toNanos());
        return Duration.ofNanos(capped / 2 + ThreadLocalRandom.current().nextLong(capped / 2 + 1));
    }

    /** The delay a node asked for, within bounds. */
    Duration retryAfter(Duration requested) {
        return requested.compareTo(maxBackoff) > 0 ? maxBackoff : requested;
    }
}
