package io.kvorum.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumException;
import io.kvorum.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The node image: small, starts in seconds, runs as configured by {@code KVORUM_*} variables, logs
 * to stdout, reports health through its HEALTHCHECK, runs as a non-root user, and stops cleanly on
 * SIGTERM.
 */
@Timeout(180)
class NodeImageIT {

    private static final long MAX_IMAGE_BYTES = 100L << 20;
    private static final Duration MAX_START = Duration.ofSeconds(20);

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @Test
    void theImageIsSmallStartsInSecondsAndFollowsItsEnvironment() throws Exception {
        long size = Docker.client().inspectImageCmd(NodeImage.name()).exec().getSize();
        assertThat(size).as("image size in bytes").isLessThan(MAX_IMAGE_BYTES);

        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(1).env("KVORUM_MAX_VALUE_BYTES", "1024").imageJvm());
        ClusterNode node = cluster.node("n1");
        assertThat(node.inspect().getConfig().getUser()).as("the user the node runs as").isEqualTo("10001:10001");

        KvorumClient kv = node.client();
        kv.put("small", new byte[1024]).join();
        assertThatThrownBy(() -> kv.put("large", new byte[1025]).join()).isInstanceOf(CompletionException.class)
                .cause().isInstanceOf(KvorumException.class).hasMessageContaining("413");

        HttpResponse<String> metrics = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(node.uri() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body()).as("the image's collector, ZGC (its heap pool is ZHeap)").contains("ZHeap");

        Await.until("the HEALTHCHECK to report healthy", Duration.ofSeconds(60), () -> node.health().equals("healthy"),
                () -> "health: " + node.health());

        assertThat(node.stop()).as("exit code after SIGTERM").isZero();
        long t = System.nanoTime();
        node.start();
        long startMillis = (System.nanoTime() - t) / 1_000_000;
        System.out.printf("[kvorum-it] image %s: %.1f MB, node serving %d ms after docker start%n",
                NodeImage.name(), size / 1e6, startMillis);
        assertThat(Duration.ofMillis(startMillis)).as("time from docker start to serving").isLessThan(MAX_START);
        assertThat(kv.get("small").join()).as("data kept across the restart").isPresent();
        assertThat(node.logs()).as("the node's stdout")
                .contains("node n1 serving HTTP on /0.0.0.0:8080 with data in /data")
                .contains("node n1 stopped");
    }
}
