package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.loopbackUri;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.cluster.ContractLoad;
import io.kvorum.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#growing-and-shrinking-a-cluster, with node processes: a fourth node joins three
 * (RF 3) and then leaves, under a writer and a reader that use every ack/from with R + W > from
 * ({@link ContractLoad#R_PLUS_W_ABOVE_FROM}). No read of an acknowledged write or delete answers
 * absent or an older value, during either change or after it. Anti-entropy is off, so only the
 * changes' own hand-over and double writes keep what was written with a small {@code from}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MembershipChangeIT {

    private static final Duration CHANGE_BOUND = Duration.ofSeconds(90);
    private static final List<String> MEMBERS = List.of("n1", "n2", "n3");
    private static final List<String> ALL = List.of("n1", "n2", "n3", "n4");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private final Map<String, KvorumClient> clients = new HashMap<>();

    @AfterEach
    void closeClients() {
        clients.values().forEach(KvorumClient::close);
    }

    @Test
    void aJoinAndALeaveKeepEveryWriteReadableWhenRPlusWExceedsFrom() throws Exception {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp, 4, 3,
                "--replication-factor", "3", "--anti-entropy-interval", "0");
        cluster.startAllReady(0, 1, 2);
        for (int i = 0; i < 4; i++) {
            clients.put(ProcessCluster.id(i), KvorumClient.builder().endpoints(loopbackUri(cluster.http(i)))
                    .requestTimeout(Duration.ofSeconds(5)).build());
        }
        try (ContractLoad load = new ContractLoad(clients::get, MEMBERS, "join-")) {
            load.awaitMoreReads(20);
            int before = load.reads();
            cluster.startReady(3);
            awaitState(cluster, "n4", "normal");
            assertThat(load.reads()).as("reads during the join").isGreaterThan(before);
            load.awaitMoreReads(20);
            load.stop();
            load.assertNoStaleRead();
            load.assertEveryKeyReadsBack(ALL);
        }
        // Keys written while n4 is a member: a quarter of those written with from 1 are on n4 alone.
        try (ContractLoad load = new ContractLoad(clients::get, MEMBERS, "leave-")) {
            load.awaitMoreReads(20);
            int before = load.reads();
            HttpResponse<String> leave = HTTP.send(HttpRequest.newBuilder(URI.create(loopbackUri(cluster.http(1))
                    + "/v0/cluster/leave?id=n4")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(leave.statusCode()).as("leave: " + leave.body()).isEqualTo(202);
            awaitState(cluster, "n4", "absent");
            assertThat(load.reads()).as("reads during the leave").isGreaterThan(before);
            load.awaitMoreReads(20);
            load.stop();
            load.assertNoStaleRead();
            load.assertEveryKeyReadsBack(MEMBERS);
        }
    }

    /** Waits until each of n1..n3 says {@code member} is in {@code state} ("absent": not a member). */
    private static void awaitState(ProcessCluster cluster, String member, String state) {
        for (int i = 0; i < MEMBERS.size(); i++) {
            int node = i;
            Await.until(MEMBERS.get(i) + " to see " + member + " " + state, CHANGE_BOUND,
                    () -> state.equals(stateOf(cluster, node, member)), cluster::describe);
        }
    }

    private static String stateOf(ProcessCluster cluster, int via, String member) {
        try {
            HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(
                    URI.create(loopbackUri(cluster.http(via)) + "/v0/cluster")).build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() != 200) {
                return "unknown";
            }
            return ClusterView.parse(answer.body()).members().stream().filter(m -> m.id().equals(member))
                    .map(ClusterView.Member::state).findFirst().orElse("absent");
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
