package io.kvorum.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.testkit.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hinted handoff (docs/operations.md#how-replicas-converge): a write that could not reach a replica is kept by its coordinator and
 * delivered within 5 s of that replica answering again. Anti-entropy is off and the checks read
 * only the returning node's own data ({@link OwnedKeys}), so only hints can make them pass.
 *
 * <p>Expected to fail until the hinted-handoff branch is merged: without hints the node never
 * gets the writes it missed.
 */
@Timeout(300)
class HintedHandoffIT {

    private static final int KEYS = 20;
    /** The 5 s of docs/operations.md#hinted-handoff, plus slack for two busy cores. */
    private static final Duration DELIVERY_BOUND = Duration.ofSeconds(5 + 5);

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @Test
    void aPartitionedNodeGetsTheWritesItMissedAfterThePartitionHeals() {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3).env("KVORUM_ANTI_ENTROPY_INTERVAL", "0"));
        ClusterNode n3 = cluster.node("n3");
        List<String> keys = OwnedKeys.firstReplicaKeys(n3, "hinted-", KEYS); // n3 is now partitioned
        List<String> values = writeThrough(cluster.node("n1"), keys);
        assertThat(OwnedKeys.firstReplicaValues(n3, keys)).as("n3 missed the writes").containsOnlyNulls();
        awaitSeenDown(cluster, cluster.node("n1"));

        n3.reconnect();
        awaitDelivered(n3, keys, values, "the partition healed");
    }

    @Test
    void aCrashedNodeGetsTheWritesItMissedAfterItRestarts() {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3).env("KVORUM_ANTI_ENTROPY_INTERVAL", "0"));
        ClusterNode n3 = cluster.node("n3");
        List<String> keys = OwnedKeys.firstReplicaKeys(n3, "hinted-", KEYS);
        n3.reconnect();
        cluster.awaitFullyConnected();
        n3.kill();
        List<String> values = writeThrough(cluster.node("n2"), keys);
        awaitSeenDown(cluster, cluster.node("n2"));

        n3.start();
        awaitDelivered(n3, keys, values, "it restarted");
    }

    /**
     * Waits until {@code coordinator} fails a request that needs every replica at once, i.e. it has
     * given up connecting to the missing node. Until then its replication stream may still hold the
     * writes for that node, queued while the connection attempt was pending, and deliver them when
     * the node returns: that would pass these tests without any hints (seen on main, where a
     * restarted node got writes sent while it was dead).
     */
    private static void awaitSeenDown(KvorumCluster cluster, ClusterNode coordinator) {
        KvorumClient kv = coordinator.client();
        long fast = cluster.spec().requestTimeout().toMillis() / 2;
        Await.until(coordinator.id() + " to fail at once a read that needs every replica", Duration.ofSeconds(60), () -> {
            long t = System.nanoTime();
            try {
                kv.get(KvorumCluster.PROBE_KEY, KvorumClient.Options.quorum(cluster.size(), cluster.size())).join();
                throw new AssertionError("a read from every replica succeeded while one was down");
            } catch (java.util.concurrent.CompletionException e) {
                return (System.nanoTime() - t) / 1_000_000 < fast;
            }
        });
    }

    /** Writes each key with the default quorum (2 of 3, reaching the two others). */
    private static List<String> writeThrough(ClusterNode coordinator, List<String> keys) {
        KvorumClient kv = coordinator.client();
        List<String> values = new ArrayList<>();
        for (String key : keys) {
            String value = key + "=missed";
            kv.put(key, value.getBytes(UTF_8)).join();
            values.add(value);
        }
        return values;
    }

    private static void awaitDelivered(ClusterNode node, List<String> keys, List<String> values, String event) {
        List<List<String>> last = new ArrayList<>(List.of(List.of()));
        Await.until(node.id() + " to hold all " + keys.size() + " writes it missed, delivered by hints after " + event,
                DELIVERY_BOUND, () -> {
                    List<String> now = OwnedKeys.firstReplicaValues(node, keys);
                    last.set(0, now);
                    return now.equals(values);
                }, () -> {
                    List<String> now = last.get(0);
                    long missing = java.util.stream.IntStream.range(0, keys.size())
                            .filter(i -> now.size() <= i || !Objects.equals(now.get(i), values.get(i))).count();
                    return node.id() + " still misses " + missing + " of " + keys.size() + " writes (docs/operations.md#how-replicas-converge: hinted "
                            + "handoff delivers within 5 s of the replica answering again); its own values: " + now;
                });
    }
}
