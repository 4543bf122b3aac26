package io.kvorum.client;

import java.time.Duration;
import java.util.Optional;

/**
 * The request had no effect because something was full: either a node answered {@code 503} (its
 * bounded queues were full; {@link #retryAfter()} carries its {@code Retry-After}), or, when
 * {@link #isLocal()}, the client itself refused to queue one more request because every pooled
 * connection to the chosen node already had its maximum of pending requests. Node 503s are
 * retried by the client as its {@link RetryPolicy} allows; this exception is what remains when
 * the attempts or the deadline ran out. Local refusals are never retried: they fail fast.
 */
public final class OverloadedException extends KvorumException {

    private final Duration retryAfter;
    private final boolean local;

    public OverloadedException(String message, Duration retryAfter) {
        this(message, retryAfter, false);
    }

    private OverloadedException(String message, Duration retryAfter, boolean local) {
        super(503, message);
        this.retryAfter = retryAfter;
        this.local = local;
    }

    static OverloadedException local(String message) {
        return new OverloadedException(message, null, true);
    }

    /** The node's {@code Retry-After}, when it sent one in seconds. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    /** Whether the client refused the request before sending it (too many pending requests). */
    public boolean isLocal() {
        return local;
    }
}
