package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.client.KvorumException;
import io.kvorum.client.RangeReader;
import io.kvorum.node.KvorumNode;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.cluster.MiniCluster.ThrowingConsumer;
import io.kvorum.node.config.NodeOption;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.awaitility.core.ConditionFactory;

/**
 * What the multi-node scenarios share: a cluster per test, started through the transport the
 * concrete subclass binds (scenarios are written once, and a one-line subclass per
 * transport runs them), and HTTP calls that turn every outcome, success or refusal, into an
 * {@link Answer} that a test can compare with what docs/ promise.
 */
abstract class ClusterScenarioSupport {

    static final String NOT_ENOUGH_REPLICAS = "Not Enough Replicas";
    /** Between two polls of a bounded wait. */
    static final Duration POLL_INTERVAL = Duration.ofMillis(20);

    private static final HttpClient RAW_HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private final NodeLauncher launcher;

    ClusterScenarioSupport(NodeLauncher launcher) {
        this.launcher = launcher;
    }

    void withCluster(int nodes, ThrowingConsumer<MiniCluster> test) throws Exception {
        withCluster(nodes, Map.of(), test);
    }

    void withCluster(int nodes, Map<NodeOption, String> options, ThrowingConsumer<MiniCluster> test)
            throws Exception {
        MiniCluster.runWithNewCluster(launcher, nodes, options, test);
    }

    /**
     * An HTTP answer as the client saw it: the status, and the value (200), or the error text of a
     * refusal (4xx, 5xx). Writes answer 201 (PUT) and 202 (DELETE), reads 200 or 404.
     */
    record Answer(int status, String body) {

        static final int OK = 200;
        static final int CREATED = 201;
        static final int ACCEPTED = 202;
        static final int NOT_FOUND = 404;

        /** The request was carried out: a write was acknowledged, a read got its quorum. */
        boolean succeeded() {
            return status == OK || status == CREATED || status == ACCEPTED || status == NOT_FOUND;
        }

        @Override
        public String toString() {
            return status + (body.isEmpty() ? "" : " '" + body + "'");
        }
    }

    /** ack of from; ack = 0 or from = 0 leave that one to the node's default. */
    static Options q(int ack, int from) {
        return Options.quorum(ack, from);
    }

    static Answer put(MiniCluster cluster, String via, String key, String value, Options options) {
        return put(cluster.client(via), key, value, options);
    }

    static Answer delete(MiniCluster cluster, String via, String key, Options options) {
        return delete(cluster.client(via), key, options);
    }

    static Answer get(MiniCluster cluster, String via, String key, Options options) {
        return get(cluster.client(via), key, options);
    }

    static Answer put(KvorumClient client, String key, String value, Options options) {
        return answer(client.put(key, utf8(value), options).thenApply(v -> Answer.CREATED));
    }

    static Answer delete(KvorumClient client, String key, Options options) {
        return answer(client.delete(key, options).thenApply(v -> Answer.ACCEPTED));
    }

    static Answer get(KvorumClient client, String key, Options options) {
        CompletableFuture<Optional<byte[]>> call = client.get(key, options);
        try {
            Optional<byte[]> value = call.join();
            return value.map(v -> new Answer(Answer.OK, new String(v, StandardCharsets.UTF_8)))
                    .orElseGet(() -> new Answer(Answer.NOT_FOUND, ""));
        } catch (CompletionException e) {
            return refusal(e);
        }
    }

    private static Answer answer(CompletableFuture<Integer> call) {
        try {
            return new Answer(call.join(), "");
        } catch (CompletionException e) {
            return refusal(e);
        }
    }

    /** A refusal with its status; anything else (the node could not be reached) fails the test. */
    private static Answer refusal(CompletionException e) {
        if (e.getCause() instanceof KvorumException k) {
            return new Answer(k.status(), k.getMessage());
        }
        throw e;
    }

    /** One request through plain {@code java.net.http}, as curl would send it; {@code body} null: none. */
    static Answer raw(MiniCluster cluster, String via, String method, String pathAndQuery, String body)
            throws IOException, InterruptedException {
        URI uri = URI.create(cluster.httpUri(via) + pathAndQuery);
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
                .build();
        HttpResponse<String> response = RAW_HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        return new Answer(response.statusCode(), response.body());
    }

    /** {@code node}'s {@code /v0/status}, which must answer 200. */
    static JsonObject status(MiniCluster c, String node) throws IOException, InterruptedException {
        Answer status = raw(c, node, "GET", "/v0/status", null);
        assertThat(status.status()).as("status of " + node).isEqualTo(Answer.OK);
        return JsonParser.parseString(status.body()).getAsJsonObject();
    }

    static void assertNotEnoughReplicas(Answer answer, String what) {
        assertThat(answer.status()).as(what + ": " + answer).isEqualTo(504);
        assertThat(answer.body()).as(what).contains(NOT_ENOUGH_REPLICAS);
    }

    static void assertBadRequest(Answer answer, String what, String mentioning) {
        assertThat(answer.status()).as(what + ": " + answer).isEqualTo(400);
        assertThat(answer.body()).as(what).contains(mentioning);
    }

    /** Whether {@code ack} of the key's first {@code from} replicas are up: docs/operations.md#how-replicas-converge's condition for success. */
    static boolean enoughReplicasUp(MiniCluster cluster, String key, int ack, int from) {
        return cluster.replicasOf(key, from).stream().filter(cluster::isUp).count() >= ack;
    }

    /** Every quorum a cluster of {@code n} nodes accepts, as {ack, from}: 1/1, 1/2, 2/2, 1/3, 2/3, 3/3, ... */
    static List<int[]> allQuorums(int n) {
        List<int[]> quorums = new ArrayList<>();
        for (int from = 1; from <= n; from++) {
            for (int ack = 1; ack <= from; ack++) {
                quorums.add(new int[] {ack, from});
            }
        }
        return quorums;
    }

    /** Every ordering of the ids: one key per ordering puts any node at any place of a preference list. */
    static List<List<String>> permutations(List<String> ids) {
        if (ids.size() <= 1) {
            return List.of(ids);
        }
        List<List<String>> out = new ArrayList<>();
        for (String first : ids) {
            List<String> rest = new ArrayList<>(ids);
            rest.remove(first);
            for (List<String> tail : permutations(rest)) {
                List<String> p = new ArrayList<>();
                p.add(first);
                p.addAll(tail);
                out.add(p);
            }
        }
        return out;
    }

    /** The ids of the nodes that are up, taken round-robin from {@code i}: spreads coordination over them. */
    static String upNode(MiniCluster cluster, int i) {
        List<String> up = cluster.upNodes();
        return up.get(Math.floorMod(i, up.size()));
    }

    /** A client of a node started outside the cluster ({@link MiniCluster#startOutsider}). */
    static KvorumClient clientOf(KvorumNode node) {
        return KvorumClient.create(URI.create("http://" + node.httpAddress().getHostString() + ":"
                + node.httpAddress().getPort()), Duration.ofSeconds(20));
    }

    /**
     * A range answer as the client saw it: 200 with the entries as {@code key=value} in the order
     * streamed, or a refusal's status and text. A stream cut short (no terminating chunk) is not an
     * answer: it throws {@link RangeReader.TruncatedRangeException} and fails the test.
     */
    record RangeAnswer(int status, List<String> entries, String error) {
        static RangeAnswer ok(List<String> entries) {
            return new RangeAnswer(Answer.OK, List.copyOf(entries), "");
        }
    }

    /** {@code GET /v0/entities?start=S[&end=E]} through {@code via}, read to its end. */
    static RangeAnswer range(MiniCluster cluster, String via, String start, String end) throws IOException {
        List<String> entries = new ArrayList<>();
        try (RangeReader reader = cluster.client(via).range(start, end)) {
            for (RangeReader.Entry e = reader.next(); e != null; e = reader.next()) {
                entries.add(e.keyString() + "=" + new String(e.value(), StandardCharsets.UTF_8));
            }
        } catch (KvorumException e) {
            return new RangeAnswer(e.status(), List.of(), e.getMessage());
        }
        return RangeAnswer.ok(entries);
    }

    /**
     * Polls a read through {@code via} until it answers {@code expected}, for at most {@code bound};
     * fails the test with the last answer otherwise.
     */
    static void awaitAnswer(MiniCluster cluster, String via, String key, Options options, Answer expected,
                            Duration bound, String what) {
        within(bound).untilAsserted(() -> assertThat(get(cluster, via, key, options))
                .as(what + ": " + via + " still answers the wrong thing for " + key + " after " + bound.toMillis()
                        + " ms")
                .isEqualTo(expected));
    }

    /**
     * A bounded poll: at once, then every {@link #POLL_INTERVAL} (short, but it leaves the shared
     * cores to the nodes), on the test's own thread, failing after {@code bound}.
     */
    static ConditionFactory within(Duration bound) {
        return await().atMost(bound).pollDelay(Duration.ZERO).pollInterval(POLL_INTERVAL).pollInSameThread();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
