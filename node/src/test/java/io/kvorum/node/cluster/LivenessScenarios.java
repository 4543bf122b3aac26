package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * docs/operations.md#how-replicas-converge "Liveness": a node that restarts is served by its peers as soon as its
 * {@code /v0/status} answers 200, and peers notice a node going down and coming back by
 * themselves, without client traffic; {@code /v0/status} shows what each node sees.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class LivenessScenarios extends ClusterScenarioSupport {

    /** docs/operations.md#how-replicas-converge and #metrics: a peer's stop and return are seen within 5 s. */
    private static final Duration NOTICED_WITHIN = Duration.ofSeconds(5);
    private static final Map<NodeOption, String> NO_ANTI_ENTROPY = Map.of(NodeOption.ANTI_ENTROPY_INTERVAL, "0");

    LivenessScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /**
     * Each node in turn is killed; requests that need it are sent meanwhile (they fail with 504,
     * and before the fix they put the peers' channels into reconnect backoff); the node is
     * restarted, and the first requests after its {@code /v0/status} answered 200 need every
     * replica (ack = from = N), through every node. None may fail.
     */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void aRestartedNodeIsServedAsSoonAsItIsReady(int n) throws Exception {
        withCluster(n, NO_ANTI_ENTROPY, c -> {
            for (String victim : c.ids()) {
                c.kill(victim);
                for (String via : c.upNodes()) {
                    assertNotEnoughReplicas(put(c, via, "while-" + victim + "-down", "x", q(n, n)),
                            "a write to all through " + via + " while " + victim + " is down");
                }
                c.restart(victim);
                for (String via : c.ids()) {
                    String key = "after-" + victim + "-via-" + via;
                    String what = "the first write to all through " + via + " after " + victim + " is ready";
                    assertThat(put(c, via, key, "v", q(n, n))).as(what).isEqualTo(new Answer(Answer.CREATED, ""));
                    assertThat(get(c, via, key, q(n, n))).as("then a read from all")
                            .isEqualTo(new Answer(Answer.OK, "v"));
                }
            }
        });
    }

    /** Without any client request, each node's status follows a peer that is killed and comes back. */
    @Test
    void peersNoticeANodeGoingDownAndComingBackWithoutTraffic() throws Exception {
        withCluster(3, NO_ANTI_ENTROPY, c -> {
            for (String observer : c.ids()) {
                for (String peer : c.ids()) {
                    if (!peer.equals(observer)) {
                        assertThat(peerState(c, observer, peer)).as(observer + " sees " + peer).isEqualTo("up");
                    }
                }
            }

            c.kill("n3");
            awaitPeerState(c, "n1", "n3", "down");
            awaitPeerState(c, "n2", "n3", "down");
            assertThat(peerState(c, "n1", "n2")).as("the others stay up").isEqualTo("up");
            // A second has passed at least: a heartbeat measured the round trip.
            assertThat(peer(c, "n1", "n2").get("rttMicros").getAsLong()).as("n1's round trip to n2").isPositive();

            c.restart("n3");
            awaitPeerState(c, "n1", "n3", "up");
            awaitPeerState(c, "n2", "n3", "up");
            awaitPeerState(c, "n3", "n1", "up");
            awaitPeerState(c, "n3", "n2", "up");
        });
    }

    private static void awaitPeerState(MiniCluster c, String observer, String peer, String state) throws Exception {
        within(NOTICED_WITHIN).untilAsserted(() -> {
            String seen = peerState(c, observer, peer);
            assertThat(seen).as(observer + " still sees " + peer + " " + seen + " after " + NOTICED_WITHIN.toMillis()
                    + " ms, expected " + state).isEqualTo(state);
        });
    }

    private static String peerState(MiniCluster c, String observer, String peer) throws Exception {
        return peer(c, observer, peer).get("state").getAsString();
    }

    private static JsonObject peer(MiniCluster c, String observer, String peer) throws Exception {
        Answer status = raw(c, observer, "GET", "/v0/status", null);
        assertThat(status.status()).as(observer + " /v0/status").isEqualTo(Answer.OK);
        JsonObject peers = JsonParser.parseString(status.body()).getAsJsonObject().getAsJsonObject("peers");
        assertThat(peers).as(observer + " /v0/status has peers: " + status.body()).isNotNull();
        assertThat(peers.keySet()).as(observer + "'s peers").doesNotContain(observer).hasSize(c.size() - 1);
        return peers.getAsJsonObject(peer);
    }
}
