package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hinted handoff (docs/operations.md#how-replicas-converge): a write that could not reach a replica is kept durably by its
 * coordinator and delivered within 5 seconds of that replica answering again.
 *
 * <p>Two nodes; the key's first replica is the one that misses the write ({@code target}), so a
 * read through it with ack = 1 of from = 1 reads its own storage and nothing else: neither the
 * coordinator nor read repair can answer for it. Anti-entropy is off, so that only hints can carry
 * the write. The coordinator's {@code /v0/status} tells how many hints it holds.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class HintedHandoffScenarios extends ClusterScenarioSupport {

    /** The 5 seconds of docs/operations.md#hinted-handoff, plus one for a slow, shared test machine. */
    private static final Duration DELIVERY_BOUND = Duration.ofSeconds(6);
    /** How long a coordinator may take to store a hint: the failed write may wait for its request timeout. */
    private static final Duration STORED_BOUND = Duration.ofSeconds(10);
    private static final Map<NodeOption, String> NO_ANTI_ENTROPY = Map.of(NodeOption.ANTI_ENTROPY_INTERVAL, "0");
    private static final Options ALONE = q(1, 1);
    private static final Options ONE_OF_TWO = q(1, 2);
    private static final String COORDINATOR = "n1";
    private static final String TARGET = "n2";

    HintedHandoffScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    private void withCluster(MiniCluster.ThrowingConsumer<MiniCluster> test) throws Exception {
        withCluster(2, NO_ANTI_ENTROPY, test);
    }

    private static String keyOnTarget(MiniCluster c, String prefix) {
        return c.keyWhosePreferenceStartsWith(prefix, List.of(TARGET, COORDINATOR));
    }

    @Test
    void aWriteTheReplicaMissedReachesItWithin5SecondsOfItsReturn() throws Exception {
        withCluster(c -> {
            String key = keyOnTarget(c, "hh-basic-");
            c.stop(TARGET);
            assertHinted(c, put(c, COORDINATOR, key, "v1", ONE_OF_TWO), Answer.CREATED, COORDINATOR, TARGET);

            c.restart(TARGET);
            awaitDelivered(c, key, new Answer(Answer.OK, "v1"));
            awaitHints(c, COORDINATOR, TARGET, n -> n == 0, DELIVERY_BOUND, "the delivered hint to be deleted");

            c.stop(COORDINATOR);
            assertThat(get(c, TARGET, key, ONE_OF_TWO)).as("the target alone, its coordinator down")
                    .isEqualTo(new Answer(Answer.OK, "v1"));
        });
    }

    /**
     * The hint outlives its coordinator: the coordinator is killed and restarted while the target is
     * still down, and delivers the hint it reads from disk once the target is back.
     */
    @Test
    void hintsSurviveARestartOfTheCoordinator() throws Exception {
        withCluster(c -> {
            String key = keyOnTarget(c, "hh-restart-");
            c.stop(TARGET);
            assertHinted(c, put(c, COORDINATOR, key, "v1", ONE_OF_TWO), Answer.CREATED, COORDINATOR, TARGET);
            c.kill(COORDINATOR);
            c.restart(COORDINATOR);
            assertThat(hintsPending(c, COORDINATOR, TARGET)).as("hints recovered from disk").isEqualTo(1);

            c.restart(TARGET);
            awaitDelivered(c, key, new Answer(Answer.OK, "v1"));
        });
    }

    /**
     * An old hint meets a newer write on its replica: the record compare rule keeps the newer. v1
     * is hinted for the target while the target is down; then the coordinator goes down with its
     * hint and the target, back, takes v2 (and hints it for the coordinator). When both are up,
     * each delivers its hint, and both replicas end with v2.
     */
    @Test
    void aReplayedHintDoesNotOverwriteANewerWrite() throws Exception {
        withCluster(c -> {
            String key = keyOnTarget(c, "hh-newer-");
            c.stop(TARGET);
            assertHinted(c, put(c, COORDINATOR, key, "v1", ONE_OF_TWO), Answer.CREATED, COORDINATOR, TARGET);
            c.stop(COORDINATOR);
            c.restart(TARGET);
            assertHinted(c, put(c, TARGET, key, "v2", ONE_OF_TWO), Answer.CREATED, TARGET, COORDINATOR);

            c.restart(COORDINATOR);
            awaitHints(c, COORDINATOR, TARGET, n -> n == 0, DELIVERY_BOUND, "the hint of v1 to be delivered");
            awaitHints(c, TARGET, COORDINATOR, n -> n == 0, DELIVERY_BOUND, "the hint of v2 to be delivered");
            assertThat(hintsDelivered(c, COORDINATOR)).as("v1 was replayed, not dropped").isEqualTo(1);

            assertThat(get(c, TARGET, key, ALONE)).isEqualTo(new Answer(Answer.OK, "v2"));
            c.stop(TARGET);
            assertThat(get(c, COORDINATOR, key, ONE_OF_TWO)).as("the coordinator alone")
                    .isEqualTo(new Answer(Answer.OK, "v2"));
        });
    }

    @Test
    void aDeleteTheReplicaMissedReachesItAsATombstone() throws Exception {
        withCluster(c -> {
            String key = keyOnTarget(c, "hh-delete-");
            assertThat(put(c, COORDINATOR, key, "v1", q(2, 2)).status()).isEqualTo(Answer.CREATED);
            c.stop(TARGET);
            assertHinted(c, delete(c, COORDINATOR, key, ONE_OF_TWO), Answer.ACCEPTED, COORDINATOR, TARGET);

            c.restart(TARGET);
            awaitDelivered(c, key, new Answer(Answer.NOT_FOUND, ""));
        });
    }

    /** The hint carries the write's absolute expiry: on the target it expires when it would have anyway. */
    @Test
    void aHintedWriteKeepsItsTimeToLive() throws Exception {
        withCluster(c -> {
            String key = keyOnTarget(c, "hh-ttl-");
            c.stop(TARGET);
            Answer write = put(c, COORDINATOR, key, "v1", ONE_OF_TWO.withTtl(Duration.ofMinutes(1)));
            assertHinted(c, write, Answer.CREATED, COORDINATOR, TARGET);

            c.restart(TARGET);
            awaitDelivered(c, key, new Answer(Answer.OK, "v1"));
            c.clock(TARGET).setSkew(Duration.ofMinutes(2));
            assertThat(get(c, TARGET, key, ALONE)).as("two minutes later on the target").isEqualTo(
                    new Answer(Answer.NOT_FOUND, ""));
        });
    }

    /** Asserts that a write through {@code via} succeeded, and waits until {@code via} holds its hint for {@code missedBy}. */
    private static void assertHinted(MiniCluster c, Answer write, int status, String via, String missedBy)
            throws Exception {
        assertThat(write.status()).as("the write through " + via + ": " + write).isEqualTo(status);
        awaitHints(c, via, missedBy, n -> n == 1, STORED_BOUND, "the hint for " + missedBy + " to be stored");
    }

    /** Waits, at most {@link #DELIVERY_BOUND}, until the target alone answers {@code expected}. */
    private static void awaitDelivered(MiniCluster c, String key, Answer expected) {
        awaitAnswer(c, TARGET, key, ALONE, expected, DELIVERY_BOUND, "hinted handoff");
    }

    // ---- the coordinator's hint counters, from /v0/status ----

    /** The {@code hints} object of {@code node}'s status. */
    private static JsonObject hints(MiniCluster c, String node) throws Exception {
        Answer status = raw(c, node, "GET", "/v0/status", null);
        assertThat(status.status()).as("status of " + node).isEqualTo(Answer.OK);
        JsonObject hints = JsonParser.parseString(status.body()).getAsJsonObject().getAsJsonObject("hints");
        assertThat(hints).as("hint counters in " + status.body()).isNotNull();
        return hints;
    }

    /** How many hints {@code node} holds for {@code peer}. */
    static long hintsPending(MiniCluster c, String node, String peer) throws Exception {
        JsonElement pending = hints(c, node).getAsJsonObject("pending").get(peer);
        return pending == null ? 0 : pending.getAsLong();
    }

    /** How many hints {@code node} delivered since it started. */
    static long hintsDelivered(MiniCluster c, String node) throws Exception {
        return hints(c, node).get("delivered").getAsLong();
    }

    private static void awaitHints(MiniCluster c, String node, String peer, LongPredicate condition, Duration bound,
                                   String what) throws Exception {
        within(bound).untilAsserted(() -> {
            long last = hintsPending(c, node, peer);
            assertThat(condition.test(last)).as("timed out after " + bound.toMillis() + " ms waiting for " + what
                    + ": " + node + " holds " + last + " hint(s) for " + peer).isTrue();
        });
    }
}
