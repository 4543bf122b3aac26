package io.kvorum.node.metrics;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import io.kvorum.node.cluster.MiniCluster;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.PrometheusText;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#metrics on running nodes: {@code GET /metrics} shows every family of the table from the start,
 * its counters follow the requests answered, no label carries a key, {@code promtool} accepts it,
 * and {@code kvorum_peer_up} follows a peer that stops and returns within 5 seconds.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetricsEndpointTest {

    /** docs/operations.md#metrics's table, with each family's type. */
    static final Map<String, String> SPEC_FAMILIES = Map.ofEntries(
            Map.entry("kvorum_requests_total", "counter"),
            Map.entry("kvorum_request_duration_seconds", "histogram"),
            Map.entry("kvorum_replica_requests_total", "counter"),
            Map.entry("kvorum_peer_up", "gauge"),
            Map.entry("kvorum_hints_pending", "gauge"),
            Map.entry("kvorum_hints_delivered_total", "counter"),
            Map.entry("kvorum_hints_dropped_total", "counter"),
            Map.entry("kvorum_read_repairs_total", "counter"),
            Map.entry("kvorum_anti_entropy_rounds_total", "counter"),
            Map.entry("kvorum_anti_entropy_records_total", "counter"),
            Map.entry("kvorum_storage_queue_depth", "gauge"),
            Map.entry("kvorum_storage_rejected_total", "counter"));
    /** Within docs/operations.md#metrics's 5 s, with room for a scrape. */
    private static final Duration PEER_UP_FOLLOWS = Duration.ofSeconds(5);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dataDir;

    static PrometheusText scrape(URI base) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString(UTF_8));
            assertThat(r.statusCode()).as("GET /metrics").isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
            return PrometheusText.parse(r.body());
        } catch (IOException e) {
            throw new AssertionError("GET /metrics of " + base + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static void assertEveryFamilyOfTheSpec(PrometheusText scrape) {
        SPEC_FAMILIES.forEach((family, type) ->
                assertThat(scrape.types()).as("family %s", family).containsEntry(family, type));
        assertThat(scrape.families()).as("the JVM's and the process's").anyMatch(f -> f.startsWith("jvm_"))
                .anyMatch(f -> f.startsWith("process_"));
        assertThat(scrape.families()).as("docs/operations.md#metrics: every family is kvorum_*, jvm_* or process_*")
                .allMatch(f -> f.matches("(kvorum|jvm|process)_\\w+"));
    }

    /**
     * The list the Grafana dashboard is checked against (GrafanaDashboardTest, perf) names only
     * families a node really exports, so a renamed meter fails here, not on an operator's screen.
     */
    @Test
    void everyFamilyTheDashboardMayUseIsExported() throws Exception {
        // Exported by a node with TLS only; this one serves plain HTTP.
        Path listed = Path.of("..", "ops", "grafana", "exported-families.txt");
        List<String> families = Files.readAllLines(listed, UTF_8).stream()
                .filter(line -> !line.isBlank() && !line.startsWith("#"))
                .filter(family -> !family.equals(TLS_ONLY)).toList();
        assertThat(families).as(listed.toString()).hasSizeGreaterThan(20);
        try (TestNode node = TestNode.start(dataDir)) {
            java.util.Set<String> exported = Await.untilValue("every family on /metrics", Duration.ofSeconds(10), () -> {
                System.gc(); // the GC binder registers its pause timer at the first collection it sees
                java.util.Set<String> seen = new java.util.TreeSet<>();
                for (String family : scrape(node.baseUri()).families()) {
                    seen.add(family.replaceAll("_(bucket|count|sum|max)$", ""));
                }
                return seen;
            }, seen -> seen.containsAll(families));

            assertThat(exported).as("families on /metrics").containsAll(families);
        }
    }

    private static final String TLS_ONLY = "kvorum_tls_certificate_expiry_timestamp_seconds";

    /** What the store takes on disk, once its writes are in tables (a restart writes the log's into one). */
    @Test
    void theStoreSizeFollowsWhatWasWritten() throws Exception {
        byte[] value = new byte[1024];
        try (TestNode node = TestNode.start(dataDir)) {
            assertThat(scrape(node.baseUri()).sum("kvorum_storage_bytes", Map.of())).as("empty").isLessThan(4096);
            for (int i = 0; i < 300; i++) {
                new java.util.Random(i).nextBytes(value); // incompressible
                assertThat(node.put("/v0/entity?id=size-" + i, value).statusCode()).isEqualTo(201);
            }
        }
        try (TestNode node = TestNode.start(dataDir)) {
            assertThat(scrape(node.baseUri()).sum("kvorum_storage_bytes", Map.of()))
                    .as("300 values of 1 KiB").isBetween(250_000.0, 1_000_000.0);
        }
    }

    @Test
    void aFreshNodeShowsEveryFamilyAtZero() throws Exception {
        try (TestNode node = TestNode.start(dataDir)) {
            PrometheusText fresh = scrape(node.baseUri());

            assertEveryFamilyOfTheSpec(fresh);
            for (String op : List.of("get", "put", "delete", "range", "repair")) {
                assertThat(fresh.series("kvorum_requests_total", Map.of("op", op))).as("op %s", op).isNotEmpty()
                        .allMatch(s -> s.value() == 0);
                assertThat(fresh.series("kvorum_request_duration_seconds_bucket", Map.of("op", op)))
                        .extracting(s -> s.labels().get("le"))
                        .as("buckets of %s", op).contains("1.0E-4", "10.0", "+Inf");
            }
            for (String queue : List.of("write", "read")) {
                assertThat(fresh.series("kvorum_storage_queue_depth", Map.of("queue", queue))).hasSize(1);
            }
            String self = node.node().config().self().id();
            assertThat(fresh.sum("kvorum_peer_up", Map.of("peer", self))).as("a node is up to itself").isEqualTo(1);
            for (String outcome : List.of("ok", "timeout", "unavailable", "overloaded")) {
                assertThat(fresh.series("kvorum_replica_requests_total", Map.of("peer", self, "outcome", outcome)))
                        .hasSize(1);
            }
        }
    }

    @Test
    void countersFollowTheRequestsAnsweredAndNoLabelCarriesAKey() throws Exception {
        String key = "metrics-secret-key-4711";
        try (TestNode node = TestNode.start(dataDir)) {
            assertThat(node.put("/v0/entity?id=" + key, "v".getBytes(UTF_8)).statusCode()).isEqualTo(201);
            assertThat(node.get("/v0/entity?id=" + key).statusCode()).isEqualTo(200);
            assertThat(node.get("/v0/entity?id=" + key + "-absent").statusCode()).isEqualTo(404);
            assertThat(node.delete("/v0/entity?id=" + key).statusCode()).isEqualTo(202);
            assertThat(node.get("/v0/entity?id=" + key + "&ack=0").statusCode()).isEqualTo(400);
            assertThat(node.get("/v0/entities?start=" + key).statusCode()).isEqualTo(200);
            assertThat(node.send("PATCH", "/v0/entity?id=" + key, null).statusCode()).isEqualTo(405);

            // A request is counted once its answer is written, which the client may see first.
            Map<List<String>, Double> expected = Map.of(List.of("put", "201"), 1.0, List.of("get", "200"), 1.0,
                    List.of("get", "404"), 1.0, List.of("delete", "202"), 1.0, List.of("get", "400"), 1.0,
                    List.of("range", "200"), 1.0);
            TestNode.awaitUntil(Duration.ofSeconds(10), () -> expected.entrySet().stream().allMatch(e ->
                    scrape(node.baseUri()).sum("kvorum_requests_total",
                            Map.of("op", e.getKey().get(0), "code", e.getKey().get(1))) == e.getValue()),
                    "every request is counted by op and code");

            PrometheusText after = scrape(node.baseUri());
            assertThat(after.sum("kvorum_requests_total", Map.of())).as("all requests; the 405 is no operation")
                    .isEqualTo(6);
            assertThat(after.sum("kvorum_request_duration_seconds_count", Map.of("op", "get"))).isEqualTo(3);
            assertThat(after.sum("kvorum_request_duration_seconds_bucket", Map.of("op", "put", "le", "+Inf")))
                    .isEqualTo(1);
            String self = node.node().config().self().id();
            assertThat(after.sum("kvorum_replica_requests_total", Map.of("peer", self, "outcome", "ok")))
                    .as("put, two gets that reached storage, delete").isEqualTo(4);
            assertThat(after.labelValues()).noneMatch(v -> v.contains(key));

            HttpResponse<byte[]> head = node.send("HEAD", "/metrics", null);
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
            HttpResponse<byte[]> post = node.send("POST", "/metrics", new byte[0]);
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(post.headers().firstValue("allow")).hasValue("GET, HEAD");
        }
    }

    /**
     * A body over the limit is refused before it reaches the router, by the aggregator: with
     * {@code Expect: 100-continue} before the body is sent, without it once the limit is passed.
     * Both 413s are answers of this node, so both count.
     */
    @Test
    void bodiesOverTheLimitAreCountedAsTheirOperation() throws Exception {
        try (TestNode node = TestNode.start(dataDir, Map.of(NodeOption.MAX_VALUE_BYTES, "16"))) {
            for (String expect : new String[] {"", "Expect: 100-continue\r\n"}) {
                try (RawHttp http = RawHttp.connect(node.address())) {
                    http.write("PUT /v0/entity?id=big HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n" + expect + "\r\n");
                    if (expect.isEmpty()) {
                        http.write(new byte[17]);
                    }
                    assertThat(http.readResponse().status()).as("a body of 17 bytes, %s", expect).isEqualTo(413);
                }
            }

            TestNode.awaitUntil(Duration.ofSeconds(10), () -> scrape(node.baseUri())
                    .sum("kvorum_requests_total", Map.of("op", "put", "code", "413")) == 2, "both 413s counted as put");
            assertThat(scrape(node.baseUri()).sum("kvorum_request_duration_seconds_count", Map.of("op", "put"))).isEqualTo(2);
        }
    }

    @Test
    void promtoolAcceptsTheExposition() throws Exception {
        Path promtool = ToolsOnPath.require("promtool");
        try (TestNode node = TestNode.start(dataDir)) {
            node.put("/v0/entity?id=k", "v".getBytes(UTF_8));
            Path text = dataDir.resolve("metrics.txt");
            Files.write(text, node.get("/metrics").body());
            Process check = new ProcessBuilder(promtool.toString(), "check", "metrics")
                    .redirectInput(text.toFile()).redirectErrorStream(true).start();
            if (!check.waitFor(30, TimeUnit.SECONDS)) {
                check.destroyForcibly();
                fail("promtool check metrics did not finish within 30 s");
            }
            String said = new String(check.getInputStream().readAllBytes(), UTF_8);
            assertThat(said).as("what promtool check metrics printed").isEmpty();
            assertThat(check.exitValue()).as("promtool's exit status").isZero();
        }
    }

    @Test
    void aClusterShowsEveryPeerAndPeerUpFollowsAStoppedPeer() throws Exception {
        MiniCluster.runWithNewCluster(3, Map.of(), cluster -> {
            for (String id : cluster.ids()) {
                PrometheusText fresh = scrape(cluster.httpUri(id));
                assertEveryFamilyOfTheSpec(fresh);
                for (String peer : cluster.ids()) {
                    assertThat(fresh.series("kvorum_hints_pending", Map.of("peer", peer))).as("%s on %s", peer, id)
                            .hasSize(1);
                    assertThat(fresh.series("kvorum_anti_entropy_rounds_total", Map.of("peer", peer, "outcome", "ok")))
                            .hasSize(1);
                }
            }
            TestNode.awaitUntil(Duration.ofSeconds(20), () -> cluster.ids().stream().allMatch(id ->
                    scrape(cluster.httpUri(id)).series("kvorum_peer_up", Map.of()).stream()
                            .allMatch(s -> s.value() == 1)), "every node sees every peer up");

            cluster.stop("n3");
            TestNode.awaitUntil(PEER_UP_FOLLOWS, () -> List.of("n1", "n2").stream().allMatch(id ->
                    scrape(cluster.httpUri(id)).sum("kvorum_peer_up", Map.of("peer", "n3")) == 0),
                    "n1 and n2 report n3 down");

            cluster.restart("n3");
            TestNode.awaitUntil(PEER_UP_FOLLOWS, () -> List.of("n1", "n2").stream().allMatch(id ->
                    scrape(cluster.httpUri(id)).sum("kvorum_peer_up", Map.of("peer", "n3")) == 1),
                    "n1 and n2 report n3 up again");
        });
    }
}
