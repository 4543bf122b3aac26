package io.kvorum.node.process;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.node.metrics.ToolsOnPath;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalDouble;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#metrics with a real Prometheus (issue 15): three node processes, scraped every second by the
 * {@code prometheus} binary on a free loopback port, serve a stream of PUTs and GETs, and one of
 * them is stopped. Prometheus' HTTP API must then show a request rate above zero, a p99 computed
 * from {@code kvorum_request_duration_seconds_bucket}, and the stopped node as down
 * ({@code kvorum_peer_up == 0}) in what the two others report. Prometheus and the nodes are stopped
 * by the test, within bounds, whatever happens.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PrometheusIT {

    /** Enough for several 1 s scrapes, liveness (5 s), and Prometheus' own start. */
    private static final Duration SEEN_WITHIN = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    @Test
    void prometheusSeesTheRatesTheLatencyAndAStoppedPeer() throws Exception {
        Path prometheus = ToolsOnPath.require("prometheus");
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 3, "--anti-entropy-interval", "0");
        cluster.startAllReady();

        Path config = tmp.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: kvorum
                    metrics_path: /metrics
                    static_configs:
                      - targets: [%s]
                """.formatted(IntStream.range(0, 3).mapToObj(n -> "'127.0.0.1:" + cluster.http(n) + "'")
                .collect(Collectors.joining(", "))));
        int port = Ports.freePort();
        Path log = tmp.resolve("prometheus.log");
        Process server = new ProcessBuilder(prometheus.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + tmp.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        AtomicBoolean trafficOn = new AtomicBoolean(true);
        Thread traffic = new Thread(() -> drive(cluster, trafficOn), "prometheus-it-traffic");
        try {
            URI api = URI.create("http://127.0.0.1:" + port);
            Await.until("Prometheus is ready", SEEN_WITHIN, () -> status(api.resolve("/-/ready")) == 200,
                    () -> tail(log));
            traffic.start();

            Await.until("Prometheus sees requests per second above 0", SEEN_WITHIN,
                    () -> query(api, "sum(rate(kvorum_requests_total[5s]))").orElse(0) > 0, () -> tail(log));
            Await.until("Prometheus computes a p99 from the duration histogram", SEEN_WITHIN,
                    () -> query(api, "histogram_quantile(0.99, sum by (le) "
                            + "(rate(kvorum_request_duration_seconds_bucket{op=\"put\"}[5s])))")
                            .stream().anyMatch(v -> v > 0 && !Double.isInfinite(v)), () -> tail(log));

            String stopped = ProcessCluster.id(2);
            String stoppedTarget = "127.0.0.1:" + cluster.http(2);
            assertThat(query(api, "min(kvorum_peer_up{peer=\"" + stopped + "\"})")).as("n3 is up before the stop")
                    .hasValue(1);
            cluster.stop(2);
            Await.until("the others report " + stopped + " down to Prometheus", SEEN_WITHIN,
                    () -> query(api, "count(kvorum_peer_up{peer=\"" + stopped + "\",instance!=\"" + stoppedTarget
                            + "\"} == 0)").orElse(0) == 2, () -> tail(log));
            // Peers may see a graceful stop before Prometheus' next scrape of n3 fails: poll for that too.
            Await.until("Prometheus' own scrape of " + stopped + " fails", SEEN_WITHIN,
                    () -> query(api, "up{instance=\"" + stoppedTarget + "\"}").orElse(1) == 0, () -> tail(log));
        } finally {
            trafficOn.set(false);
            traffic.join(10_000);
            server.destroy(); // SIGTERM: Prometheus shuts down cleanly
            if (!server.waitFor(20, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** PUTs and GETs through the nodes that are up, paced, until {@code on} turns false. */
    private static void drive(ProcessCluster cluster, AtomicBoolean on) {
        AtomicInteger n = new AtomicInteger();
        while (on.get()) {
            int i = n.getAndIncrement();
            int node = i % 2; // n1 and n2: n3 is the one stopped
            String key = "prom-" + (i % 500);
            try {
                HTTP.send(HttpRequest.newBuilder(cluster.entity(node, key, "ack=1")).timeout(Duration.ofSeconds(5))
                        .PUT(HttpRequest.BodyPublishers.ofString("v" + i)).build(), HttpResponse.BodyHandlers.discarding());
                HTTP.send(HttpRequest.newBuilder(cluster.entity(node, key, "ack=1")).timeout(Duration.ofSeconds(5))
                        .GET().build(), HttpResponse.BodyHandlers.discarding());
                Thread.sleep(5);
            } catch (IOException e) {
                // a node being stopped: the next request goes on
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static int status(URI uri) {
        try {
            return HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The value of an instant query that gives one series, or empty when it gives none (or NaN). */
    private static OptionalDouble query(URI api, String promql) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                    api.resolve("/api/v1/query?query=" + URLEncoder.encode(promql, UTF_8)))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString(UTF_8));
            assertThat(r.statusCode()).as("query %s: %s", promql, r.body()).isEqualTo(200);
            JsonArray result = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("data")
                    .getAsJsonArray("result");
            if (result.isEmpty()) {
                return OptionalDouble.empty();
            }
            assertThat(result.size()).as("series of %s: %s", promql, result).isEqualTo(1);
            JsonObject series = result.get(0).getAsJsonObject();
            double value = Double.parseDouble(series.getAsJsonArray("value").get(1).getAsString());
            return Double.isNaN(value) ? OptionalDouble.empty() : OptionalDouble.of(value);
        } catch (IOException e) {
            throw new AssertionError("Prometheus did not answer " + promql, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String tail(Path log) {
        try {
            String text = Files.readString(log, UTF_8);
            return "prometheus log: " + text.substring(Math.max(0, text.length() - 3000));
        } catch (IOException e) {
            return "no prometheus log: " + e;
        }
    }
}
