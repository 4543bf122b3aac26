package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumException;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#replacing-a-disk with node processes: a wiped member is started on its empty
 * data dir and nothing else is done. Under a W=2 R=2 (of 3) workload, no read of an acknowledged
 * write answers 404 or another value (504 is allowed), and the member finishes rebuilding by itself.
 *
 * <p>n1 is down while the first keys are written, and anti-entropy and hints are off, so that n1
 * keeps missing them: only n2 and n3 hold them when n2 is SIGKILLed and its data dir deleted. Once
 * n2 says it serves, n3 is stopped: n1 and n2 alone must then answer every acknowledged key, which
 * they can only if n2 took them back.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RebuildIT {

    private static final int KEYS = 1500;
    private static final int PARALLELISM = 32;
    private static final Duration ANSWERS = Duration.ofSeconds(90);
    private static final Duration REBUILT_WITHIN = Duration.ofSeconds(90);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    @Test
    void aWipedMemberNeverHidesAnAcknowledgedWriteAndRebuildsByItself() throws Exception {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 3,
                "--anti-entropy-interval", "0", "--hint-max-age", "0");
        cluster.startAllReady();
        cluster.stop(0);
        WriteLoad before = new WriteLoad(client(cluster, 2), "before", PARALLELISM, 11);
        before.writeAll(KEYS, ANSWERS);
        assertThat(before.failed()).as("W=2 writes with n2 and n3 up").isEmpty();
        Map<String, byte[]> acknowledged = before.acknowledged();
        cluster.startReady(0);

        NodeJvm n2 = cluster.process(1);
        n2.kill();
        n2.awaitExit(NodeJvm.KILL_TIMEOUT);
        deleteRecursively(tmp.resolve("data").resolve("n2"));
        cluster.startReady(1);

        WriteLoad during = new WriteLoad(client(cluster, 2), "during", PARALLELISM / 2, 12);
        during.startContinuous();
        Reader reader = new Reader(List.of(client(cluster, 0), client(cluster, 1)), acknowledged);
        reader.start();
        Await.until("n2 to finish rebuilding", REBUILT_WITHIN, () -> "serving".equals(status(cluster, 1)),
                cluster::describe);
        reader.stop();
        during.stop(ANSWERS);
        assertThat(reader.wrong).as("reads of acknowledged writes through n1 and n2 that answered 404 or another "
                + "value (%d read, %d answered 504)", reader.read.get(), reader.refused.get()).isEmpty();
        assertThat(reader.read.get()).as("reads checked while n2 rebuilt").isPositive();

        cluster.stop(2);
        Map<String, byte[]> all = new HashMap<>(acknowledged);
        all.putAll(during.acknowledged());
        for (int via : new int[] {0, 1}) {
            Map<String, Optional<byte[]>> read = WriteLoad.readAll(client(cluster, via), all.keySet(), PARALLELISM, ANSWERS);
            assertThat(WriteLoad.mismatches(all, read)).as("acknowledged writes read through %s with n3 down",
                    ProcessCluster.id(via)).isEmpty();
        }
    }

    /** Reads acknowledged keys in turn through each client until stopped, keeping what answered wrong. */
    private static final class Reader {
        final List<KvorumClient> clients;
        final Map<String, byte[]> expected;
        final Queue<String> wrong = new ConcurrentLinkedQueue<>();
        final AtomicInteger read = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();
        final AtomicBoolean stopping = new AtomicBoolean();
        private final Thread thread;

        Reader(List<KvorumClient> clients, Map<String, byte[]> expected) {
            this.clients = clients;
            this.expected = expected;
            List<String> keys = expected.keySet().stream().sorted(Comparator.naturalOrder()).toList();
            this.thread = new Thread(() -> {
                for (int i = 0; !stopping.get(); i++) {
                    String key = keys.get(i % keys.size());
                    KvorumClient via = clients.get(i % clients.size());
                    check(key, via, i % clients.size());
                }
            }, "rebuild-reader");
        }

        private void check(String key, KvorumClient via, int node) {
            try {
                Optional<byte[]> got = via.get(key).join();
                read.incrementAndGet();
                if (got.isEmpty()) {
                    wrong.add(key + " through " + ProcessCluster.id(node) + ": 404");
                } else if (!Arrays.equals(got.get(), expected.get(key))) {
                    wrong.add(key + " through " + ProcessCluster.id(node) + ": another value");
                }
            } catch (CompletionException e) {
                if (e.getCause() instanceof KvorumException k && k.status() == 504) {
                    refused.incrementAndGet();
                } else {
                    wrong.add(key + " through " + ProcessCluster.id(node) + ": " + e.getCause());
                }
            }
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            stopping.set(true);
            thread.join(ANSWERS.toMillis());
            assertThat(thread.isAlive()).as("the reader stopped").isFalse();
        }
    }

    private static KvorumClient client(ProcessCluster cluster, int node) {
        return KvorumClient.create(loopbackUri(cluster.http(node)), Duration.ofSeconds(30));
    }

    /** The {@code status} of the node's {@code /v0/status}, or what failed. */
    private static String status(ProcessCluster cluster, int node) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(loopbackUri(cluster.http(node))
                    + "/v0/status")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() != 200 ? "HTTP " + r.statusCode()
                    : JsonParser.parseString(r.body()).getAsJsonObject().get("status").getAsString();
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
