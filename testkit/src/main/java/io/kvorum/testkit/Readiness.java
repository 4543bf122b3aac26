package io.kvorum.testkit;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The one readiness probe of the tests: a node is ready when {@code GET /v0/status} answers 200
 * (docs/http-api.md). Polls are bounded (Awaitility), never a fixed sleep.
 */
public final class Readiness {

    /** Between two probes: short, but it leaves the shared cores to the starting node. */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(20);
    /** How long one probe may take before it counts as "not ready yet". */
    public static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(PROBE_TIMEOUT)
            .build();

    private Readiness() {
    }

    /** Whether {@code GET uri} answers 200 within {@code timeout}; false if nothing listens yet. */
    public static boolean answers200(URI uri, Duration timeout) {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false; // not listening yet, or too slow to answer
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while probing " + uri, e);
        }
    }

    /** Polls {@code GET uri} until it answers 200; fails after {@code bound}. */
    public static void awaitStatus200(URI uri, Duration bound) {
        awaitStatus200(uri.toString(), uri, bound, () -> { }, () -> "");
    }

    /**
     * Polls {@code GET uri} until it answers 200.
     *
     * @param who names what is awaited in the failure message (a node id, a process name)
     * @param stillStarting runs before each probe and throws (an {@link AssertionError}) to fail at
     *        once, e.g. when the node's process exited
     * @param details appended to the failure message (a node's log, say); read only on failure
     * @throws AssertionError when {@code bound} passes first, saying how many probes were made
     */
    public static void awaitStatus200(String who, URI uri, Duration bound, Runnable stillStarting,
                                      Supplier<String> details) {
        AtomicInteger attempts = new AtomicInteger();
        try {
            await(who + " ready").atMost(bound).pollDelay(Duration.ZERO).pollInterval(POLL_INTERVAL)
                    .pollInSameThread()
                    .until(() -> {
                        stillStarting.run();
                        attempts.incrementAndGet();
                        return answers200(uri, PROBE_TIMEOUT);
                    });
        } catch (ConditionTimeoutException e) {
            String more = details.get();
            throw new AssertionError(who + " did not answer GET " + uri + " with 200 within " + bound.toMillis()
                    + " ms (" + attempts.get() + " attempts)" + (more.isEmpty() ? "" : "\n" + more), e);
        }
    }

    /**
     * Waits until {@code GET status} answers 200 with a node that serves reads: a node that started on
     * a fresh store in a cluster of several members checks with its peers first whether it lost data,
     * and shows {@code "status":"rebuilding"} meanwhile (docs/operations.md#replacing-a-disk).
     */
    public static void awaitServing(String who, URI status, Duration bound, Supplier<String> details) {
        HttpRequest request = HttpRequest.newBuilder(status).timeout(PROBE_TIMEOUT).GET().build();
        Await.until(who + " to serve reads", bound, () -> {
            try {
                HttpResponse<String> answer = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
                return answer.statusCode() == 200 && !answer.body().contains("\"rebuilding\"");
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while probing " + status, e);
            }
        }, details);
    }
}
