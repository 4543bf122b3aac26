package io.kvorum.node.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NodeMetricsTest {

    @Test
    void aMemberThatLeftLeavesNoGaugeBehindButItsCountersStay() {
        NodeMetrics metrics = new NodeMetrics("n1", List.of("n1", "n2", "n3"), Set.of());
        metrics.bindPeerUp("n3", () -> false);
        metrics.bindClockOffset("n3", () -> 0.002);
        metrics.bindPeerPhi("n3", () -> 9.5);
        metrics.peerSuspected("n3");
        metrics.replicas("n3").answered(NodeMetrics.ReplicaOutcome.OK);
        assertThat(metrics.scrape()).contains("kvorum_peer_up{peer=\"n3\"} 0.0", "kvorum_clock_offset_seconds{peer=\"n3\"}",
                "kvorum_hints_pending{peer=\"n3\"}", "kvorum_peer_phi{peer=\"n3\"} 9.5",
                "kvorum_peer_suspicions_total{peer=\"n3\"} 1.0", "kvorum_peer_suspicions_total{peer=\"n2\"} 0.0",
                "kvorum_peer_phi{peer=\"n1\"} 0.0");

        metrics.forgetMember("n3");

        String scrape = metrics.scrape();
        assertThat(scrape).as("a departed member is not down for ever").doesNotContain("kvorum_peer_up{peer=\"n3\"}")
                .doesNotContain("kvorum_clock_offset_seconds{peer=\"n3\"}").doesNotContain("kvorum_hints_pending{peer=\"n3\"}")
                .doesNotContain("kvorum_peer_phi{peer=\"n3\"}").contains("kvorum_peer_suspicions_total{peer=\"n3\"} 1.0")
                .contains("kvorum_peer_up{peer=\"n2\"}", "kvorum_replica_requests_total{outcome=\"ok\",peer=\"n3\"} 1.0");

        metrics.bindPeerUp("n3", () -> true); // a member of that id joins later
        assertThat(metrics.scrape()).contains("kvorum_peer_up{peer=\"n3\"} 1.0", "kvorum_hints_pending{peer=\"n3\"}");
    }
}
