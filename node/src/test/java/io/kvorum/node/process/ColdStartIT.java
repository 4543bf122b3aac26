package io.kvorum.node.process;

import static io.kvorum.node.process.ProcessCluster.id;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.config.NodeOption;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node is ready when GET /v0/status answers 200, and a request whose replicas are all up never
 * fails: a cold cluster serves quorum writes from the moment every node is ready. Peer channels
 * opened lazily by the first requests, and then code run interpreted while the JIT compilers took
 * the cores, gave the first burst 504s (docs/operations.md, "Start-up and readiness").
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ColdStartIT {

    private static final int WRITES = 256;
    /** Far above the node's request timeout (1 s): a request not answered by then hangs. */
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    /**
     * Three nodes start together; as soon as the last of them answers {@code /v0/status} 200,
     * {@value #WRITES} PUTs with {@code ack=2&from=3} are sent at once, spread evenly over the three
     * nodes (write i through node i mod 3), each on its own connection. Every one must be a 201.
     */
    @Test
    void firstBurstOfQuorumWritesOnAColdClusterSucceeds() {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 3,
                "--warm-up", NodeOption.WARM_UP.defaultValue()); // as java -jar starts them
        cluster.startAllReady();
        long readyAt = System.nanoTime();

        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (int i = 0; i < WRITES; i++) {
            int node = i % cluster.size();
            String key = String.format("cold/%03d", i);
            HttpRequest put = HttpRequest.newBuilder(cluster.entity(node, key, "ack=2&from=3"))
                    .timeout(CLIENT_TIMEOUT).PUT(HttpRequest.BodyPublishers.ofString("value of " + key)).build();
            long sentAt = System.nanoTime();
            answers.add(client.sendAsync(put, HttpResponse.BodyHandlers.ofString()).handle((r, error) -> {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt);
                String sent = String.format("PUT id=%s via %s, sent %d ms after all were ready, answered in %d ms",
                        key, id(node), TimeUnit.NANOSECONDS.toMillis(sentAt - readyAt), ms);
                if (error != null) {
                    return sent + ": " + WriteLoad.unwrap(error);
                }
                return r.statusCode() == 201 ? null : sent + ": " + r.statusCode() + " \"" + r.body().strip() + "\"";
            }));
        }
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).join(); // each bounded by CLIENT_TIMEOUT

        List<String> failed = answers.stream().map(CompletableFuture::join).filter(a -> a != null).toList();
        Map<String, Long> byAnswer = new TreeMap<>(failed.stream()
                .collect(Collectors.groupingBy(a -> a.substring(a.indexOf(": ") + 2).replaceAll("\\d+ of", "N of"),
                        Collectors.counting())));
        assertThat(failed.size())
                .as("PUTs of the first burst (%d, ack=2&from=3) that failed, by answer %s; the first ones:%n  %s%n",
                        WRITES, byAnswer, failed.stream().limit(10).collect(Collectors.joining("\n  ")))
                .isZero();
    }
}
