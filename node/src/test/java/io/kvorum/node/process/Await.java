package io.kvorum.node.process;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Bounded polling: the tests wait for a condition, never for a fixed time. A condition that does
 * not hold within its bound fails the test with a message that says what was awaited.
 */
final class Await {

    private static final Duration POLL_INTERVAL = Duration.ofMillis(20);

    private Await() {
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @param details appended to the failure message (e.g. a child process's logs); read only on failure
     * @throws AssertionError when the bound passes first
     */
    static void until(String what, Duration bound, BooleanSupplier condition, Supplier<String> details) {
        try {
            await(what).atMost(bound).pollDelay(Duration.ZERO).pollInterval(POLL_INTERVAL).pollInSameThread()
                    .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("timed out after " + bound.toMillis() + " ms waiting for " + what
                    + "\n" + details.get(), e);
        }
    }

    static void until(String what, Duration bound, BooleanSupplier condition) {
        until(what, bound, condition, () -> "");
    }

    /**
     * Waits until the node on {@code httpPort} serves reads: a node that started on a fresh store in
     * a cluster of several members checks with its peers first whether it lost data, and shows
     * {@code "status":"rebuilding"} meanwhile (docs/operations.md#replacing-a-disk).
     */
    static void untilServing(int httpPort, Supplier<String> details) {
        HttpClient http = HttpClient.newHttpClient();
        URI status = URI.create("http://127.0.0.1:" + httpPort + "/v0/status");
        until("the node on " + httpPort + " to serve reads", Duration.ofSeconds(30), () -> {
            try {
                HttpResponse<String> answer = http.send(HttpRequest.newBuilder(status).build(),
                        HttpResponse.BodyHandlers.ofString());
                return answer.statusCode() == 200 && !answer.body().contains("\"rebuilding\"");
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }, details);
    }
}
