package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/operations.md#replacing-a-disk: a member that starts on an empty data dir while its peers
 * remember it with data rebuilds its copies from the other replicas by itself, and until then its
 * replica answers no read, so that a read with R + W > from of an acknowledged write answers that
 * write or 504, never 404 or an older value.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class RebuildScenarios extends ClusterScenarioSupport {

    private static final Duration REBUILT_WITHIN = Duration.ofSeconds(60);

    RebuildScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    /**
     * n1 misses writes made at W=2 of 3 (no hints, no anti-entropy), so that n3 and n2 alone hold
     * them; then n2's disk is wiped. With n3 down, n1 and n2 are a read quorum that holds nothing
     * newer than n1's stale copies: a read there must answer 504, not 404 nor n1's older value.
     * Once n3 is back, n2 takes its keys from it, says "serving", and holds every key itself.
     */
    @Test
    void aWipedReplicaNeverHidesAWriteAndRebuildsByItself() throws Exception {
        withCluster(3, Map.of(NodeOption.ANTI_ENTROPY_INTERVAL, "0", NodeOption.HINT_MAX_AGE, "0"), c -> {
            Map<String, String> written = new LinkedHashMap<>();
            for (int i = 0; i < 20; i++) {
                String stale = c.keyWhosePreferenceStartsWith("rebuild-old-" + i + "-", List.of("n2"));
                assertThat(put(c, "n1", stale, "old " + i, q(3, 3)).status()).isEqualTo(Answer.CREATED);
                written.put(stale, "new " + i);
                written.put(c.keyWhosePreferenceStartsWith("rebuild-absent-" + i + "-", List.of("n2")), "only " + i);
            }
            c.kill("n1");
            written.forEach((key, value) -> assertThat(put(c, "n3", key, value, q(2, 3)).status())
                    .as("write of " + key).isEqualTo(Answer.CREATED));
            c.restart("n1"); // without hints or anti-entropy it keeps missing them

            c.kill("n2");
            c.wipe("n2");
            c.kill("n3");
            c.restart("n2");

            for (String key : written.keySet()) {
                for (String via : List.of("n1", "n2")) {
                    assertNotEnoughReplicas(get(c, via, key, q(2, 3)),
                            key + " through " + via + " with n3 down and n2 wiped");
                }
            }
            JsonObject status = status(c, "n2");
            assertThat(status.get("status").getAsString()).as(status.toString()).isEqualTo("rebuilding");

            c.restart("n3");
            within(REBUILT_WITHIN).untilAsserted(() -> {
                for (Map.Entry<String, String> e : written.entrySet()) {
                    for (String via : c.ids()) {
                        Answer read = get(c, via, e.getKey(), q(2, 3));
                        if (read.status() != 504) {
                            assertThat(read).as(e.getKey() + " through " + via).isEqualTo(new Answer(Answer.OK, e.getValue()));
                        }
                    }
                }
                assertThat(status(c, "n2").get("status").getAsString()).isEqualTo("serving");
            });
            // n2 is each key's first replica: from=1 reads n2's own copy alone.
            c.kill("n3");
            written.forEach((key, value) -> assertThat(get(c, "n2", key, q(1, 1)))
                    .as(key + " from n2 alone").isEqualTo(new Answer(Answer.OK, value)));
        });
    }

    /** A new cluster's nodes all start empty: nobody remembers them, so none rebuilds. */
    @Test
    void theNodesOfANewClusterServeAtOnce() throws Exception {
        withCluster(3, c -> {
            for (String id : c.ids()) {
                assertThat(status(c, id).get("status").getAsString()).as(id).isEqualTo("serving");
            }
            String key = c.keyWhosePreferenceStartsWith("new-cluster-", List.of("n3"));
            assertThat(put(c, "n1", key, "v", q(1, 1)).status()).isEqualTo(Answer.CREATED);
            assertThat(get(c, "n2", key, q(1, 1))).isEqualTo(new Answer(Answer.OK, "v"));
        });
    }
}
