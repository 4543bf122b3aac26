package io.kvorum.client;

import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
    private final long deadline;
    final CompletableFuture<T> result = new CompletableFuture<>();
    private final Set<Endpoint> tried = new HashSet<>();
    private volatile CompletableFuture<R> current;
    private int attempts;

    Call(KvorumClient client, byte[] key, Duration timeout, String what, Attempt<R> attempt, Function<R, T> outcome) {
        this.client = client;
        this.policy = client.settings().retryPolicy();
        this.group = client.group();
        this.key = key;
        this.what = what;
        this.attempt = attempt;
        this.outcome = outcome;
        this.deadline = System.nanoTime() + timeout.toNanos();
        io.netty.util.concurrent.ScheduledFuture<?> timer = group.schedule(
                () -> fail(new KvorumTimeoutException(what + " timed out after " + timeout.toMillis() + " ms")),
                timeout.toNanos(), TimeUnit.NANOSECONDS);
        result.whenComplete((v, e) -> timer.cancel(false));
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
        result.completeExceptionally(wrap(cause));
    }

    private void next() {
        if (result.isDone()) {
            return;
        }
        attempts++;
        Endpoint endpoint;
        CompletableFuture<R> f;
        try {
            endpoint = choose();
            f = attempt.start(endpoint);
        } catch (RuntimeException e) {
            result.completeExceptionally(wrap(e));
            return;
        }
        current = f;
        if (result.isDone()) { // the deadline passed while this attempt was being started
            f.completeExceptionally(new KvorumTimeoutException(what + " timed out"));
        }
        f.whenComplete((raw, error) -> {
            if (error == null) {
                try {
                    T value = outcome.apply(raw);
                    endpoint.markUp();
                    result.complete(value);
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
        if (result.isDone()) {
            return;
        }
        if (error instanceof ConnectException || servesElsewhere(error)) {
            endpoint.markDown(error);
        }
        Duration delay = retryDelay(error);
        if (delay == null || attempts >= policy.maxAttempts() || System.nanoTime() + delay.toNanos() >= deadline) {
            result.completeExceptionally(wrap(error));
            return;
        }
        try {
            group.schedule(this::next, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(wrap(error)); // the client is closing
        }
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
