package io.kvorum.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one readiness probe of the tests and perf: a node is ready when {@code GET /v0/status}
 * answers 200 (docs/http-api.md). Every probe takes the {@link HttpClient} to ask with, so that a
 * caller of a node that serves HTTPS passes a client that trusts its CA; the methods without one
 * ask over plain HTTP. Polls are bounded ({@link Await}), never a fixed sleep.
 */
public final class Readiness {

    /** How long one probe may take before it counts as "not ready yet". */
    public static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(PROBE_TIMEOUT)
            .build();

    private Readiness() {
    }

    /** The answer to {@code GET uri} within {@code timeout}; null if nothing listens yet or it is too slow. */
    public static HttpResponse<String> get(HttpClient http, URI uri, Duration timeout) {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null; // not listening yet, or too slow to answer
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while probing " + uri, e);
        }
    }

    /** The status code of {@code GET uri} within {@code timeout}; -1 if nothing listens yet or it is too slow. */
    public static int status(HttpClient http, URI uri, Duration timeout) {
        HttpResponse<String> answer = get(http, uri, timeout);
        return answer == null ? -1 : answer.statusCode();
    }

    /** Whether {@code GET uri} answers 200 within {@code timeout}; false if nothing listens yet. */
    public static boolean answers200(HttpClient http, URI uri, Duration timeout) {
        return status(http, uri, timeout) == 200;
    }

    /** {@link #answers200(HttpClient, URI, Duration)} over plain HTTP. */
    public static boolean answers200(URI uri, Duration timeout) {
        return answers200(HTTP, uri, timeout);
    }

    /** Polls {@code GET uri} over plain HTTP until it answers 200; fails after {@code bound}. */
    public static void awaitStatus200(URI uri, Duration bound) {
        awaitStatus200(HTTP, uri.toString(), uri, bound, () -> { }, () -> "");
    }

    /** {@link #awaitStatus200(HttpClient, String, URI, Duration, Runnable, Supplier)} over plain HTTP. */
    public static void awaitStatus200(String who, URI uri, Duration bound, Runnable stillStarting,
                                      Supplier<String> details) {
        awaitStatus200(HTTP, who, uri, bound, stillStarting, details);
    }

    /**
     * Polls {@code GET uri} with {@code http} until it answers 200.
     *
     * @param who names what is awaited in the failure message (a node id, a process name)
     * @param stillStarting runs before each probe and throws (an {@link AssertionError}) to fail at
     *        once, e.g. when the node's process exited
     * @param details appended to the failure message (a node's log, say); read only on failure
     * @throws AssertionError when {@code bound} passes first, saying how many probes were made
     */
    public static void awaitStatus200(HttpClient http, String who, URI uri, Duration bound, Runnable stillStarting,
                                      Supplier<String> details) {
        await(http, who + " to answer GET " + uri + " with 200", uri, bound, answer -> answer.statusCode() == 200,
                stillStarting, details);
    }

    /** Polls {@code GET uri} with {@code http} until it answers {@code code} (a node out of rotation: 503). */
    public static void awaitStatus(HttpClient http, URI uri, int code, Duration bound) {
        await(http, uri + " to answer " + code, uri, bound, answer -> answer.statusCode() == code, () -> { }, () -> "");
    }

    /**
     * Waits until {@code GET status} answers 200 with a node that serves reads: a node that started on
     * a fresh store in a cluster of several members checks with its peers first whether it lost data,
     * and shows {@code "status":"rebuilding"} meanwhile (docs/operations.md#replacing-a-disk).
     */
    public static void awaitServing(String who, URI status, Duration bound, Supplier<String> details) {
        await(HTTP, who + " to serve reads", status, bound,
                answer -> answer.statusCode() == 200 && !answer.body().contains("\"rebuilding\""), () -> { }, details);
    }

    private static void await(HttpClient http, String what, URI uri, Duration bound,
                              Predicate<HttpResponse<String>> ready, Runnable stillStarting, Supplier<String> details) {
        AtomicInteger probes = new AtomicInteger();
        Await.until(what, bound, () -> {
            stillStarting.run();
            probes.incrementAndGet();
            HttpResponse<String> answer = get(http, uri, PROBE_TIMEOUT);
            return answer != null && ready.test(answer);
        }, () -> "(" + probes.get() + " probes) " + details.get());
    }
}
