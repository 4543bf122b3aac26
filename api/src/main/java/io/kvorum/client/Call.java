package io.kvorum.client;

import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One client call: its attempts, their backoff and its deadline. Each attempt chooses an endpoint
 * (preferring healthy ones this call has not tried), starts a raw operation there and maps its
 * outcome; failures are retried as the {@link RetryPolicy} says. The deadline is a timer on the
 * event loops that fails the call with {@link KvorumTimeoutException} and aborts the attempt in
 * progress. Everything after the first attempt runs on the event loops; nothing touches the
 * common ForkJoinPool.
 *
 * @param <R> the raw outcome of an attempt (an answer, an opened stream)
 * @param <T> what the caller gets
 */
final class Call<R, T> {

    /** Starts one attempt on an endpoint; the returned future is the one the deadline completes. */
    interface Attempt<R> {
        CompletableFuture<R> start(Endpoint endpoint);
    }

    private final KvorumClient client;
    private final RetryPolicy policy;
    private final EventLoopGroup group;
    private final byte[] key;
    private final Attempt<R> attempt;
    private final Function<R, T> outcome;
    private final String what;
    private final Duration timeout;
    private final long deadline;
    /** What the caller gets: completed once the call's outcome was reported, so that a caller sees its own call's meters. */
    final CompletableFuture<T> result = new CompletableFuture<>();
    /** The call's outcome, as its attempts, deadline or close settle it; the first one wins. */
    private final CompletableFuture<T> settled = new CompletableFuture<>();
    private final Set<Endpoint> tried = new HashSet<>();
    /** What the earlier attempts failed with, for the final failure to carry as suppressed; event-loop confined after the first attempt. */
    private final List<Throwable> earlier = new ArrayList<>();
    private volatile CompletableFuture<R> current;
    private volatile Endpoint currentEndpoint;
    private int attempts;
    /** The status of the last answer, 0 before one came; set on the event loop before the result completes. */
    private volatile int status;
    private final Telemetry.CallProbe probe;

    /** @param operation get, put, delete or range, as the call is reported; null: not reported (status, membership) */
    Call(KvorumClient client, byte[] key, Duration timeout, String operation, String what, Attempt<R> attempt,
         Function<R, T> outcome) {
        this.client = client;
        this.policy = client.settings().retryPolicy();
        this.group = client.group();
        this.key = key;
        this.what = what;
        this.attempt = attempt;
        this.outcome = outcome;
        this.timeout = timeout;
        long timeoutNanos = nanos(timeout);
        this.deadline = System.nanoTime() + timeoutNanos;
        io.netty.util.concurrent.ScheduledFuture<?> timer = group.schedule(this::deadlinePassed, timeoutNanos, TimeUnit.NANOSECONDS);
        settled.whenComplete((v, e) -> timer.cancel(false));
        this.probe = operation == null ? Telemetry.CallProbe.NONE : client.settings().telemetry().call(operation);
        settled.whenComplete((v, e) -> {
            ended(e);
            if (e == null) {
                result.complete(v);
            } else {
                result.completeExceptionally(e);
            }
        });
        result.whenComplete((v, e) -> {
            if (e != null) {
                settled.completeExceptionally(e); // the caller cancelled the call: no more attempts
            }
        });

    }

    /** Reports how the call ended: its outcome, the node of its last attempt, its last status and its retries. */
    private void ended(Throwable failure) {
        Throwable error = failure == null ? null : unwrap(failure);
        Endpoint e = currentEndpoint;
        int answered = error instanceof KvorumException k && !(k instanceof OverloadedException o && o.isLocal())
                ? k.status() : status;
        probe.ended(new Telemetry.CallOutcome(Telemetry.CallOutcome.of(answered, error), e == null ? null : e.host(),
                e == null ? 0 : e.port(), answered, Math.max(0, attempts - 1), error));
    }

    /** Longer timeouts than this (a century) are this: "no timeout" without overflowing a deadline. */
    static final long MAX_TIMEOUT_NANOS = Long.MAX_VALUE / 4;
    /** The message of the {@link KvorumConnectionException} of a call that {@link KvorumClient#close()} ended. */
    static final String CLIENT_CLOSED = "the client was closed";

    /** {@code timeout} in nanoseconds, at most {@link #MAX_TIMEOUT_NANOS}. */
    static long nanos(Duration timeout) {
        return timeout.compareTo(Duration.ofNanos(MAX_TIMEOUT_NANOS)) > 0 ? MAX_TIMEOUT_NANOS : timeout.toNanos();
    }

    /** "250 ms", or "0.3 ms" below a millisecond. */
    static String describe(Duration timeout) {
        return timeout.compareTo(Duration.ofMillis(1)) >= 0 ? timeout.toMillis() + " ms"
                : String.format(Locale.ROOT, "%.3f ms", timeout.toNanos() / 1e6);
    }

    /**
     * The deadline passed: the call fails, and the endpoint of the attempt in progress is suspected
     * of hanging (a node that refuses connections is found at once; one that accepts and never
     * answers only so).
     */
    private void deadlinePassed() {
        if (settled.isDone()) {
            return;
        }
        Endpoint e = currentEndpoint;
        fail(new KvorumTimeoutException(what + " timed out after " + describe(timeout)
                + (e != null ? " (waiting for " + e.peer() + ")" : "")));
        if (e != null) {
            e.suspect();
        }
    }

    Call<R, T> start() {
        next();
        return this;
    }

    /** Fails the call and aborts its attempt in progress (deadline, client closed). */
    void fail(Throwable cause) {
        CompletableFuture<R> c = current;
        if (c != null) {
            c.completeExceptionally(cause);
        }
        settled.completeExceptionally(wrap(cause));
    }

    private void next() {
        if (settled.isDone()) {
            return;
        }
        if (client.isClosed()) { // a retry that comes after close(): the call fails as close() says
            settled.completeExceptionally(wrap(new KvorumConnectionException(CLIENT_CLOSED)));
            return;
        }
        attempts++;
        Endpoint endpoint;
        CompletableFuture<R> f;
        try {
            endpoint = choose();
            f = attempt.start(endpoint);
        } catch (RuntimeException e) {
            // An endpoint closed under this attempt by a close() that began after the check above.
            settled.completeExceptionally(wrap(client.isClosed() ? new KvorumConnectionException(CLIENT_CLOSED) : e));
            return;
        }
        current = f;
        currentEndpoint = endpoint;
        if (settled.isDone()) { // the deadline passed while this attempt was being started
            f.completeExceptionally(new KvorumTimeoutException(what + " timed out"));
        }
        f.whenComplete((raw, error) -> {
            if (error == null) {
                status = raw instanceof Response r ? r.status() : 200; // a range opens on a 200
                try {
                    T value = outcome.apply(raw);
                    endpoint.markUp();
                    settled.complete(value);
                } catch (RuntimeException e) {
                    if (!servesElsewhere(e)) {
                        endpoint.markUp(); // it answered: it is up, whatever it answered
                    }
                    failed(endpoint, e);
                }
            } else {
                failed(endpoint, unwrap(error));
            }
        });
    }

    /** The endpoint of the next attempt, among those of the client's routing now (a retry follows a membership change). */
    private Endpoint choose() {
        KvorumClient.Routing routing = client.routing();
        List<Endpoint> endpoints = routing.endpoints();
        List<URI> candidates = new ArrayList<>(endpoints.size());
        addCandidates(endpoints, candidates, true, true);
        if (candidates.isEmpty()) {
            addCandidates(endpoints, candidates, true, false);
        }
        if (candidates.isEmpty()) {
            addCandidates(endpoints, candidates, false, true);
        }
        if (candidates.isEmpty()) {
            addCandidates(endpoints, candidates, false, false);
        }
        URI chosen = routing.selector().select(key, List.copyOf(candidates));
        for (Endpoint e : endpoints) {
            if (e.uri().equals(chosen) && candidates.contains(chosen)) {
                tried.add(e);
                return e;
            }
        }
        throw new IllegalStateException("the endpoint selector chose " + chosen + ", not one of " + candidates);
    }

    private void addCandidates(List<Endpoint> endpoints, List<URI> into, boolean healthyOnly, boolean untriedOnly) {
        for (Endpoint e : endpoints) {
            if ((!healthyOnly || e.healthy()) && (!untriedOnly || !tried.contains(e))) {
                into.add(e.uri());
            }
        }
    }

    private void failed(Endpoint endpoint, Throwable error) {
        if (settled.isDone()) {
            return;
        }
        if (error instanceof ConnectException && !Endpoint.isTlsRefusal(error) || servesElsewhere(error)) {
            endpoint.markDown(error);
        }
        Duration delay = retryDelay(error);
        if (delay == null || attempts >= policy.maxAttempts() || System.nanoTime() + delay.toNanos() >= deadline) {
            giveUp(error);
            return;
        }
        earlier.add(error);
        probe.retried(Telemetry.CallOutcome.retryReason(error));
        try {
            group.schedule(this::next, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            giveUp(error); // the client is closing
        }
    }

    /** Fails the call with the last attempt's error, carrying the earlier attempts' (other nodes') as suppressed. */
    private void giveUp(Throwable last) {
        for (Throwable e : earlier) {
            if (e != last) {
                last.addSuppressed(e);
            }
        }
        settled.completeExceptionally(wrap(last));
    }

    /**
     * Whether {@code error} is a node's {@code 503} with {@code Retry-After: 0}: the node will not
     * serve soon and another does now (it left the cluster or was removed, or its clock is off from
     * its peers'). The call is retried elsewhere at once, and the endpoint is marked down, so that
     * further calls skip it until its {@code GET /v0/status} answers 200 again.
     */
    private static boolean servesElsewhere(Throwable error) {
        return error instanceof OverloadedException o && !o.isLocal()
                && o.retryAfter().filter(Duration::isZero).isPresent();
    }

    /** How long to wait before retrying after {@code error}, or null when it is not retried. */
    private Duration retryDelay(Throwable error) {
        if (error instanceof OverloadedException o) {
            return o.isLocal() ? null : o.retryAfter().map(policy::retryAfter).orElseGet(() -> policy.backoff(attempts));
        }
        if (Endpoint.isTlsRefusal(error)) {
            return null; // a certificate the client does not trust, a protocol it does not speak: the same next time
        }
        if (error instanceof ConnectException || error instanceof KvorumConnectionException) {
            return policy.backoff(attempts); // every request the client sends is idempotent
        }
        return null;
    }

    /**
     * Failures reach callers wrapped in a {@link CompletionException}, as from any dependent stage
     * (and from the java.net.http client before): {@code handle} and {@code whenComplete} see the
     * wrapper, {@code join} throws it, {@code get} unwraps it into an {@code ExecutionException}.
     */
    private static CompletionException wrap(Throwable t) {
        return t instanceof CompletionException c ? c : new CompletionException(t);
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** IOExceptions are thrown as they are; anything else unchecked. */
    static IOException rethrow(Throwable t) {
        if (t instanceof IOException io) {
            return io;
        }
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IOException(t);
    }
}
