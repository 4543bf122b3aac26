package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.Ports;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The warm-up of a starting node (docs/operations.md, "Start-up and readiness") sends its requests
 * to a throwaway cluster of its own: none of them reaches the node's clients, store, ranges,
 * Merkle trees or request metrics, and nothing of the rig is left in the data dir.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RequestPathWarmupTest {

    private static final int WARM_UP = 400;
    private static final Pattern SAMPLE = Pattern.compile("^(kvorum_(?:requests|replica_requests|request_duration_seconds_count)"
            + "(?:_total)?)\\{([^}]*)} ([0-9.eE+-]+)$", Pattern.MULTILINE);

    @TempDir
    Path tmp;

    private final List<KvorumNode> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void stop() {
        nodes.forEach(KvorumNode::close);
    }

    @Test
    void aWarmUpSendsEveryRequestAndLeavesNothingBehind() throws Exception {
        int[] ports = Ports.freePorts(2);
        NodeConfig config = config("n1=127.0.0.1:" + ports[0] + ":" + ports[1], "n1");

        RequestPathWarmup.Outcome outcome = RequestPathWarmup.run(config);

        assertThat(outcome.stoppedBecause()).as("why the warm-up stopped early").isNull();
        assertThat(outcome.sent()).isEqualTo(WARM_UP);
        assertThat(config.dataDir().resolve(RequestPathWarmup.FOLDER)).doesNotExist();
    }

    @Test
    void aWarmedClusterHoldsAndCountsNothingOfItsWarmUp() throws Exception {
        int[] ports = Ports.freePorts(4);
        String cluster = "n1=127.0.0.1:" + ports[0] + ":" + ports[1] + ",n2=127.0.0.1:" + ports[2] + ":" + ports[3];
        ch.qos.logback.classic.Logger kvorumLogs = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger("io.kvorum");
        ch.qos.logback.classic.Level levelBefore = kvorumLogs.getEffectiveLevel();
        // Started as java -jar starts them (KvorumNode.start(config): with the warm-up), together.
        NodeConfig first = config(cluster, "n1");
        NodeConfig other = config(cluster, "n2");
        CompletableFuture<KvorumNode> second = CompletableFuture.supplyAsync(() -> start(other));
        nodes.add(start(first));
        nodes.add(second.get(90, TimeUnit.SECONDS));

        assertThat(kvorumLogs.getEffectiveLevel()).as("the level of Kvorum's logs once both warm-ups, which overlap, ended")
                .isEqualTo(levelBefore);
        for (int i = 0; i < nodes.size(); i++) {
            String base = "http://127.0.0.1:" + nodes.get(i).httpAddress().getPort();
            String metrics = get(base + "/metrics").body();
            Matcher m = SAMPLE.matcher(metrics);
            List<String> counted = new ArrayList<>();
            int samples = 0;
            while (m.find()) {
                samples++;
                if (Double.parseDouble(m.group(3)) != 0) {
                    counted.add(m.group(0));
                }
            }
            assertThat(samples).as("request metrics of n%d (there is a series per op)", i + 1).isPositive();
            assertThat(counted).as("requests counted by n%d before any client sent one", i + 1).isEmpty();
            assertThat(nodes.get(i).config().dataDir().resolve(RequestPathWarmup.FOLDER)).doesNotExist();
        }
        String base = "http://127.0.0.1:" + nodes.get(0).httpAddress().getPort();
        HttpResponse<String> range = get(base + "/v0/entities?start=%00"); // from the least key: every key
        assertThat(range.statusCode()).isEqualTo(200);
        assertThat(range.body()).as("every key the cluster holds").isEmpty();
        HttpResponse<String> repair = http.send(HttpRequest.newBuilder(URI.create(base + "/v0/repair"))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(repair.statusCode()).as(repair.body()).isEqualTo(200);
        assertThat(repair.body()).as("an anti-entropy round between two empty stores repairs nothing")
                .doesNotContainPattern("\"(recordsSent|recordsReceived|bucketsDiffering)\":[1-9]");
    }

    /** Overlapping warm-ups (nodes started together in one JVM) leave the log levels as they found them. */
    @Test
    void theLastWarmUpToEndRestoresTheLogLevels() {
        ch.qos.logback.classic.Logger kvorumLogs = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger("io.kvorum");
        ch.qos.logback.classic.Level before = kvorumLogs.getLevel();
        RequestPathWarmup.Quiet.enter();
        RequestPathWarmup.Quiet.enter();
        RequestPathWarmup.Quiet.exit(); // the first to start ends first
        assertThat(kvorumLogs.getLevel()).as("while one warm-up still runs").isEqualTo(ch.qos.logback.classic.Level.ERROR);
        RequestPathWarmup.Quiet.exit();
        assertThat(kvorumLogs.getLevel()).as("once both ended").isEqualTo(before);
    }

    private KvorumNode start(NodeConfig config) {
        try {
            return KvorumNode.start(config);
        } catch (KvorumNode.StartupException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    private NodeConfig config(String cluster, String id) throws Exception {
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        raw.put(NodeOption.CLUSTER, cluster);
        raw.put(NodeOption.NODE_ID, id);
        raw.put(NodeOption.DATA_DIR, tmp.resolve(id).toString());
        raw.put(NodeOption.WARM_UP, Integer.toString(WARM_UP));
        Files.createDirectories(tmp.resolve(id));
        return NodeConfig.fromRaw(raw);
    }

    private HttpResponse<String> get(String uri) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
