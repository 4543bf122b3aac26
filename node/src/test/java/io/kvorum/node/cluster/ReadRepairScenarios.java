package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient.Options;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Read repair (docs/operations.md#how-replicas-converge): when the replicas that answered a read disagree, the stale ones get the
 * newest version soon after, without the read waiting for it. A replica "alone" is read by
 * stopping the others and asking with ack = 1 of from = N, so that only it can answer.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
abstract class ReadRepairScenarios extends ClusterScenarioSupport {

    private static final Duration REPAIR_BOUND = Duration.ofSeconds(5);
    /** Hinted handoff would also bring the stale replicas up to date, and hide a broken read repair. */
    private static final Map<NodeOption, String> NO_HINTS = Map.of(NodeOption.HINT_MAX_AGE, "0");

    ReadRepairScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /** Two replicas hold v2, the third an older v1: a quorum read answers v2 and repairs the third. */
    @Test
    void aQuorumReadRepairsTheStaleReplica() throws Exception {
        withCluster(3, NO_HINTS, c -> {
            String stale = "n3";
            String key = c.keyWhosePreferenceStartsWith("rr-stale-", List.of(stale));
            assertThat(put(c, "n1", key, "v1", q(3, 3)).status()).isEqualTo(Answer.CREATED);
            c.stop(stale);
            assertThat(put(c, "n1", key, "v2", q(2, 3)).status()).isEqualTo(Answer.CREATED);
            c.restart(stale);

            assertThat(get(c, "n2", key, q(2, 3))).isEqualTo(new Answer(Answer.OK, "v2"));

            c.stop("n1");
            c.stop("n2");
            assertEventuallyAlone(c, stale, key, "v2");
        });
    }

    /**
     * The mirror case: only one replica holds the newest version (written with ack = 1 while the
     * others were down). A read of all three repairs the other two, whichever answered first.
     */
    @Test
    void aReadRepairsFromTheOnlyReplicaWithTheNewestVersion() throws Exception {
        withCluster(3, NO_HINTS, c -> {
            String fresh = "n1";
            String key = c.keyWhosePreferenceStartsWith("rr-fresh-", List.of(fresh));
            assertThat(put(c, "n1", key, "v1", q(3, 3)).status()).isEqualTo(Answer.CREATED);
            c.stop("n2");
            c.stop("n3");
            assertThat(put(c, fresh, key, "v2", q(1, 3)).status()).isEqualTo(Answer.CREATED);
            c.restart("n2");
            c.restart("n3");

            // R + W = 3 + 1 > 3: this read must see v2, and every replica answered it.
            assertThat(get(c, "n2", key, q(3, 3))).isEqualTo(new Answer(Answer.OK, "v2"));

            c.stop(fresh);
            c.stop("n3");
            assertEventuallyAlone(c, "n2", key, "v2");
            c.restart("n3");
            c.stop("n2");
            assertEventuallyAlone(c, "n3", key, "v2");
        });
    }

    /** Polls, within a bound, a read that only {@code node} can answer, until it answers {@code value}. */
    private static void assertEventuallyAlone(MiniCluster c, String node, String key, String value) {
        Options aloneOfAll = q(1, c.size());
        within(REPAIR_BOUND).untilAsserted(() -> assertThat(get(c, node, key, aloneOfAll))
                .as(node + " alone still answers the wrong thing for " + key + " after " + REPAIR_BOUND
                        + "; read repair did not reach it")
                .isEqualTo(new Answer(Answer.OK, value)));
    }
}
