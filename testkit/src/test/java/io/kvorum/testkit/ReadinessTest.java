package io.kvorum.testkit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ReadinessTest {

    private final AtomicInteger code = new AtomicInteger(503);
    private final AtomicReference<String> body = new AtomicReference<>("{\"status\":\"rebuilding\"}");
    private HttpServer server;
    private URI status;

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v0/status", this::answer);
        server.start();
        status = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v0/status");
    }

    /** Answers with {@link #code} and {@link #body}, whatever the test set them to. */
    private void answer(HttpExchange exchange) throws IOException {
        byte[] answer = body.get().getBytes(UTF_8);
        exchange.sendResponseHeaders(code.get(), answer.length);
        exchange.getResponseBody().write(answer);
        exchange.close();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void awaitsTheCodeItIsAskedForWithTheClientItIsGiven() {
        HttpClient http = HttpClient.newHttpClient();
        assertThat(Readiness.status(http, status, Duration.ofSeconds(5))).isEqualTo(503);
        Readiness.awaitStatus(http, status, 503, Duration.ofSeconds(5));
        assertThatThrownBy(() -> Readiness.awaitStatus200(http, "n1", status, Duration.ofMillis(200), () -> { },
                () -> "its log")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("n1 to answer GET " + status + " with 200").hasMessageEndingWith("its log");
        code.set(200);
        Readiness.awaitStatus200(http, "n1", status, Duration.ofSeconds(5), () -> { }, () -> "");
        assertThat(Readiness.status(http, URI.create("http://127.0.0.1:1/v0/status"), Duration.ofSeconds(5)))
                .as("nothing listens").isEqualTo(-1);
    }

    @Test
    void aRebuildingNodeIsReadyButNotServing() {
        code.set(200);
        assertThat(Readiness.answers200(status, Duration.ofSeconds(5))).isTrue();
        assertThatThrownBy(() -> Readiness.awaitServing("n1", status, Duration.ofMillis(200), () -> ""))
                .hasMessageContaining("n1 to serve reads");
        body.set("{\"status\":\"serving\"}");
        Readiness.awaitServing("n1", status, Duration.ofSeconds(5), () -> "");
    }

    @Test
    void aProbeThatFindsTheNodeGoneFailsAtOnce() {
        AtomicInteger probes = new AtomicInteger();
        assertThatThrownBy(() -> Readiness.awaitStatus200("n1", status, Duration.ofSeconds(30), () -> {
            if (probes.incrementAndGet() == 2) {
                throw new AssertionError("n1 exited");
            }
        }, () -> "")).hasMessage("n1 exited");
    }
}
