package io.kvorum.perf.metrics;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.kvorum.testkit.Await;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The scraper against stand-in nodes: one with /metrics, one old node that answers 400 there. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MetricsScraperTest {

    private final java.util.List<HttpServer> servers = new java.util.ArrayList<>();

    @AfterEach
    void stop() {
        servers.forEach(s -> s.stop(0));
    }

    @Test
    void readsEachNodeUntilStoppedAndNotesANodeWithoutMetrics() throws Exception {
        AtomicInteger served = new AtomicInteger();
        Map<String, URI> nodes = new LinkedHashMap<>();
        nodes.put("n1", serve(exchange -> answer(exchange, 200,
                MetricsReportTest.nodeScrape(100 * served.incrementAndGet(), 0, 0, 0.0, 0))));
        nodes.put("n2", serve(exchange -> answer(exchange, 400, "unknown path /metrics")));

        ScrapeLog log;
        try (MetricsScraper scraper = MetricsScraper.start(nodes, Duration.ofMillis(50), Duration.ofSeconds(5))) {
            Await.until("three answers of n1", Duration.ofSeconds(10), () -> served.get() >= 3);
            log = scraper.stop();
        }

        assertThat(log.scrapes().get("n1").size()).as("the scrapes at 50 ms, and the last at stop").isGreaterThanOrEqualTo(3);
        assertThat(log.scrapes().get("n1").get(0).series("kvorum_requests_total")).hasSize(2);
        assertThat(log.scrapes().get("n1")).isSortedAccordingTo((a, b) -> Long.compare(a.epochMillis(), b.epochMillis()));
        assertThat(log.scrapes().get("n2")).isEmpty();
        assertThat(log.problems()).containsOnlyKeys("n2").containsEntry("n2", "GET /metrics answered 400");
        assertThat(log.hasSeries()).isTrue();
    }

    private URI serve(com.sun.net.httpserver.HttpHandler metrics) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/metrics", metrics);
        server.start();
        servers.add(server);
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private static void answer(com.sun.net.httpserver.HttpExchange exchange, int code, String body) throws IOException {
        byte[] bytes = body.getBytes(UTF_8);
        exchange.sendResponseHeaders(code, bytes.length);
        try (OutputStream os = exchange.getResponseBody()) {
            os.write(bytes);
        }
    }
}
