package io.kvorum.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Quorum requests (the default {@code ack} of a majority, {@code from} = all nodes) keep succeeding
 * while a minority of nodes is killed, paused or partitioned away; with a majority gone they fail
 * with {@code 504 Not Enough Replicas} within the request timeout, never hanging; and once the
 * faults heal, everything acknowledged is still there.
 */
@Timeout(300)
class QuorumIT {

    /**
     * Scheduling slack on top of {@code --request-timeout} for a 504: the nodes and the test share
     * two busy cores. A coordinator that waited for a frozen replica instead of its deadline would
     * take the client's 10 s.
     */
    private static final Duration SLACK = Duration.ofMillis(2000);
    private static final int KEYS = 20;

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    static Stream<Arguments> sizesAndFaults() {
        return Stream.of(3, 5).flatMap(size -> Stream.of(Fault.values()).map(f -> Arguments.of(size, f)));
    }

    @ParameterizedTest(name = "{0} nodes, {1}")
    @MethodSource("sizesAndFaults")
    void quorumSurvivesAMinorityDownAndFailsFastWithoutAMajority(int size, Fault fault) {
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(size));
        List<ClusterNode> nodes = cluster.nodes();
        int minority = size - cluster.majority(); // 1 of 3, 2 of 5
        List<ClusterNode> down = new ArrayList<>();

        // A minority down, one node at a time: every request through the others succeeds.
        for (int i = 0; i < minority; i++) {
            ClusterNode victim = nodes.get(size - 1 - i);
            fault.inject(victim);
            down.add(victim);
            List<ClusterNode> up = nodes.subList(0, size - down.size());
            String round = "r" + down.size();
            writeAndReadBack(up, round);
            deleteAndReadAbsent(up, round + "-0");
        }

        // One more: the majority is gone. Each surviving coordinator answers 504 within the timeout.
        ClusterNode last = nodes.get(size - 1 - minority);
        fault.inject(last);
        down.add(last);
        List<ClusterNode> coordinators = new ArrayList<>(nodes.subList(0, size - down.size()));
        if (fault == Fault.PARTITION) {
            coordinators.add(last); // a partitioned node still answers, and must fail as fast
        }
        List<String> latencies = new ArrayList<>();
        for (ClusterNode c : coordinators) {
            KvorumClient kv = c.client();
            latencies.add(c.id() + ":" + expect504(c, "PUT", () -> kv.put("no-quorum", "maybe".getBytes(UTF_8)))
                    + "/" + expect504(c, "GET", () -> kv.get("no-quorum"))
                    + "/" + expect504(c, "DELETE", () -> kv.delete("no-quorum")));
        }
        System.out.printf("[kvorum-it] %d of %d nodes %s: 504 after PUT/GET/DELETE ms %s (request timeout %d ms)%n",
                down.size(), size, fault, latencies, cluster.spec().requestTimeout().toMillis());

        // Heal everything: every acknowledged write is still there, through every node.
        down.forEach(fault::heal);
        cluster.awaitFullyConnected();
        for (ClusterNode c : nodes) {
            KvorumClient kv = c.client();
            for (int r = 1; r <= minority; r++) {
                for (int k = 1; k < KEYS; k++) {
                    assertValue(kv, "r" + r + "-" + k, "r" + r + "-" + k + "=v", c);
                }
                assertThat(kv.get("r" + r + "-0").join()).as("deleted key via %s", c).isEmpty();
            }
        }
    }

    private static void writeAndReadBack(List<ClusterNode> up, String round) {
        List<CompletableFuture<Void>> puts = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            String key = round + "-" + k;
            puts.add(up.get(k % up.size()).client().put(key, (key + "=v").getBytes(UTF_8)));
        }
        for (int k = 0; k < KEYS; k++) {
            int key = k;
            join(puts.get(k), () -> "PUT " + round + "-" + key + " via " + up.get(key % up.size()));
        }
        for (int k = 0; k < KEYS; k++) {
            ClusterNode reader = up.get((k + 1) % up.size());
            assertValue(reader.client(), round + "-" + k, round + "-" + k + "=v", reader);
        }
    }

    private static void deleteAndReadAbsent(List<ClusterNode> up, String key) {
        join(up.get(0).client().delete(key), () -> "DELETE " + key + " via " + up.get(0));
        ClusterNode reader = up.get(up.size() - 1);
        assertThat(join(reader.client().get(key), () -> "GET " + key + " via " + reader)).as("deleted %s", key).isEmpty();
    }

    private static void assertValue(KvorumClient kv, String key, String expected, ClusterNode via) {
        Optional<byte[]> value = join(kv.get(key), () -> "GET " + key + " via " + via);
        assertThat(value.map(v -> new String(v, UTF_8))).as("%s via %s", key, via).hasValue(expected);
    }

    private static <T> T join(CompletableFuture<T> f, java.util.function.Supplier<String> what) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw new AssertionError(what.get() + " failed with a minority down: " + e.getCause(), e.getCause());
        }
    }

    /** Sends a request that must answer 504 Not Enough Replicas in time; returns how long it took. */
    private static long expect504(ClusterNode via, String what, java.util.function.Supplier<CompletableFuture<?>> request) {
        Duration bound = Duration.ofMillis(1000).plus(SLACK);
        long t = System.nanoTime();
        try {
            request.get().join();
            fail("%s via %s succeeded with the majority gone", what, via);
        } catch (CompletionException e) {
            long ms = (System.nanoTime() - t) / 1_000_000;
            assertThat(e.getCause()).as("%s via %s", what, via).isInstanceOf(KvorumException.class);
            KvorumException k = (KvorumException) e.getCause();
            assertThat(k.status()).as("%s via %s: %s", what, via, k.getMessage()).isEqualTo(504);
            assertThat(k.getMessage()).contains("Not Enough Replicas");
            assertThat(ms).as("ms for %s via %s to answer 504", what, via).isLessThanOrEqualTo(bound.toMillis());
            return ms;
        }
        return 0;
    }
}
