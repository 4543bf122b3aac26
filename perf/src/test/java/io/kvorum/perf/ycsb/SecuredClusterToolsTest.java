package io.kvorum.perf.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.KvorumNode;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.time.Clock;
import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.metrics.MetricsScraper;
import io.kvorum.perf.metrics.ScrapeLog;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import site.ycsb.ByteIterator;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * The perf tools against a real in-process node secured as {@code --tls --token} secure it
 * (docs/operations.md#security): {@link ClusterSecurity} makes what the node is started with, the metrics scraper (with
 * a {@code read} token) and the YCSB binding (with a {@code write} token) reach it over HTTPS, and without them they
 * are refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SecuredClusterToolsTest {

    @TempDir
    static Path runDir;
    static ClusterSecurity security;
    static KvorumNode node;
    static URI uri;

    @BeforeAll
    static void startSecuredNode() throws Exception {
        security = ClusterSecurity.create(runDir, true, true);
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        raw.put(NodeOption.DATA_DIR, runDir.resolve("data").toString());
        raw.put(NodeOption.BIND, "127.0.0.1");
        List<String> flags = security.nodeOptions();
        for (int i = 0; i < flags.size(); i += 2) {
            raw.put(NodeOption.valueOf(flags.get(i).substring(2).replace('-', '_').toUpperCase()), flags.get(i + 1));
        }
        node = KvorumNode.start(NodeConfig.fromRaw(raw), 0, Clock.SYSTEM);
        uri = URI.create("https://127.0.0.1:" + node.httpAddress().getPort());
    }

    @AfterAll
    static void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void theSecurityNamesItsFilesAndNeverItsToken() throws Exception {
        assertThat(security.describe()).isEqualTo("tls+token");
        assertThat(security.scheme()).isEqualTo("https");
        assertThat(security.caFile()).isRegularFile();
        String token = Files.readString(security.tokenFile()).strip();
        assertThat(token).hasSizeGreaterThanOrEqualTo(32);
        assertThat(security.toolEnvironment()).containsEntry(ClusterSecurity.TOKEN_FILE_VARIABLE,
                security.tokenFile().toString());
        assertThat(String.join(" ", security.nodeOptions()) + security + security.toolEnvironment()).doesNotContain(token);
        assertThat(ClusterSecurity.none().nodeOptions()).isEmpty();
        Path nodeTokens = Path.of(security.nodeOptions().get(security.nodeOptions().indexOf("--auth-token-file") + 1));
        assertThat(Files.readAllLines(nodeTokens)).as("the load's token can write, and no token is an admin")
                .hasSize(2).contains(token + " write perf-load").noneMatch(l -> l.contains("admin"));
    }

    @Test
    void theScraperReadsMetricsOverHttpsWithTheTokenAndIsRefusedWithout() throws Exception {
        ScrapeLog secured;
        try (MetricsScraper scraper = MetricsScraper.start(Map.of("n1", uri), Duration.ofMillis(200), Duration.ofSeconds(5),
                security)) {
            secured = scraper.stop(); // stop() scrapes once more, so every node was read at least once
        }
        assertThat(secured.problems()).isEmpty();
        assertThat(secured.scrapes().get("n1")).isNotEmpty();
        HttpResponse<String> write = security.httpClient().build().send(security.authorize(
                HttpRequest.newBuilder(uri.resolve("/v0/entity?id=scraped"))).PUT(HttpRequest.BodyPublishers.ofString("v"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(write.statusCode()).as("the scraper's token is a read token").isEqualTo(403);

        ScrapeLog open;
        try (MetricsScraper scraper = MetricsScraper.start(Map.of("n1", uri), Duration.ofMillis(200), Duration.ofSeconds(5))) {
            open = scraper.stop();
        }
        assertThat(open.problems()).as("no CA: the handshake fails").containsKey("n1");
    }

    @Test
    void theBindingReachesTheNodeWithTheCaAndTheTokenFile() throws Exception {
        ClientSecurity client = new ClientSecurity(security.caFile(), security.tokenFile(), false);
        KvorumDB db = open(client.properties());
        try {
            assertThat(db.insert("usertable", "u1", Map.of("f", new StringByteIterator("v")))).isEqualTo(Status.OK);
            Map<String, ByteIterator> read = new HashMap<>();
            assertThat(db.read("usertable", "u1", null, read)).isEqualTo(Status.OK);
            assertThat(read.get("f").toString()).isEqualTo("v");
        } finally {
            db.cleanup();
        }

        KvorumDB withoutToken = open(Map.of(ClientSecurity.CA, security.caFile().toString()));
        try {
            assertThat(withoutToken.read("usertable", "u1", null, new HashMap<>())).as("refused: 401").isEqualTo(Status.ERROR);
        } finally {
            withoutToken.cleanup();
        }
    }

    private static KvorumDB open(Map<String, String> security) throws DBException {
        KvorumDB db = new KvorumDB();
        Properties p = new Properties();
        p.setProperty(KvorumDB.URLS, uri.toString());
        p.setProperty(KvorumDB.TIMEOUT_MS, "5000");
        security.forEach(p::setProperty);
        db.setProperties(p);
        db.init();
        return db;
    }
}
