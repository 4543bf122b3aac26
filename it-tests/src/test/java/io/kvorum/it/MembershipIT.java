package io.kvorum.it;

import io.kvorum.testkit.Await;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.History;
import io.kvorum.testkit.History.Op;
import io.kvorum.testkit.Readiness;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Membership changes of the real image (docs/operations.md#growing-and-shrinking-a-cluster): the Docker cluster grows from three to four
 * nodes and shrinks back to three under a steady load, then a node lost for good is replaced
 * (removed, a new node joins on a fresh volume, the members repair). No request fails while every
 * node is up, every acknowledged write survives, and the whole history passes the checker.
 */
@Timeout(420)
class MembershipIT {

    private static final Duration CHANGE_BOUND = Duration.ofSeconds(120);
    private static final Duration PROGRESS_BOUND = Duration.ofSeconds(60);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @Test
    void theClusterGrowsAndShrinksUnderLoadAndALostNodeIsReplaced() throws Exception {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3));
        List<ClusterNode> first = cluster.nodes();
        History history = new History();
        try (Workload load = new Workload(cluster, history, 3, Workload.uniquePuts(), 17).start()) {
            load.awaitProgress(30, PROGRESS_BOUND);
            ClusterNode n4 = cluster.join();
            awaitState(cluster.nodes(), "n4", "normal");
            load.awaitProgress(30, PROGRESS_BOUND);

            HttpResponse<String> leave = post(first.get(1), "/v0/cluster/leave?id=n4");
            assertThat(leave.statusCode()).as("leave: " + leave.body()).isEqualTo(202);
            awaitState(first, "n4", "absent");
            Await.until("n4, which left, to answer its status 503", CHANGE_BOUND, () -> statusOf(n4) == 503, () -> n4.tail(20));
            load.awaitProgress(30, PROGRESS_BOUND);
            cluster.retire(n4);
        }
        List<Op> failed = history.ops().stream().filter(op -> op.outcome() != History.Outcome.OK).toList();
        assertThat(failed).as("requests that failed while every node was up").isEmpty();

        ClusterNode lost = cluster.node("n3");
        lost.kill();
        HttpResponse<String> removed = post(cluster.node("n1"), "/v0/cluster/remove?id=n3");
        assertThat(removed.statusCode()).as("remove: " + removed.body()).isEqualTo(200);
        cluster.retire(lost);
        ClusterNode replacement = cluster.join();
        awaitState(cluster.nodes(), replacement.id(), "normal");
        for (ClusterNode node : cluster.nodes()) {
            HttpResponse<String> repaired = post(node, "/v0/repair");
            assertThat(repaired.statusCode()).as("repair on " + node.id() + ": " + repaired.body()).isEqualTo(200);
        }

        Verify.finalReads(cluster, history, Verify.keys(history));
        assertThat(Verify.everyAcknowledgedPutSurvived(history)).isPositive();
        Verify.noViolations(history);
    }

    /** Polls (bounded) until every node of {@code via} says {@code member} is in {@code state} ("absent": not a member). */
    private static void awaitState(List<ClusterNode> via, String member, String state) {
        for (ClusterNode node : via) {
            Await.until(node.id() + " to see " + member + " " + state, CHANGE_BOUND,
                    () -> state.equals(MemberStates.stateOf(node.uri(), member)), () -> node.tail(20));
        }
    }

    /** The status code of {@code GET /v0/status} on {@code node}; -1 when it does not answer. */
    private static int statusOf(ClusterNode node) {
        return Readiness.status(HTTP, URI.create(node.uri() + "/v0/status"), Duration.ofSeconds(5));
    }

    private static HttpResponse<String> post(ClusterNode node, String pathAndQuery) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(node.uri() + pathAndQuery)).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
