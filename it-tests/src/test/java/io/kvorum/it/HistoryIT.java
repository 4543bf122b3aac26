package io.kvorum.it;

import io.kvorum.testkit.Await;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.History.Outcome;
import io.kvorum.testkit.History.Type;
import io.kvorum.testkit.History;
import io.kvorum.testkit.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Concurrent clients put, get and delete on a few keys, through every node, while a chaos thread
 * kills, pauses and partitions nodes, sometimes a majority at once (so some writes fail with 504
 * or get no answer and may or may not take effect). {@link HistoryChecker} then finds no lost or
 * overwritten acknowledged write and no quorum read going back in time. Seeded: a failure message
 * names the seed.
 */
@Timeout(400)
class HistoryIT {

    private static final Duration CHAOS = Duration.ofSeconds(40);
    private static final int KEYS = 6;

    @RegisterExtension
    final ClusterExtension clusters = new ClusterExtension();

    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {3, 5})
    void concurrentClientsUnderChaosSeeNoViolation(int size) {
        long seed = System.nanoTime();
        System.out.printf("[kvorum-it] HistoryIT seed %d%n", seed);
        KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(size));
        History history = new History();
        Random chaos = new Random(seed);
        List<String> faults = new ArrayList<>();
        try (Workload load = new Workload(cluster, history, 4, randomOps(), seed).start()) {
            long end = System.nanoTime() + CHAOS.toNanos();
            while (System.nanoTime() < end) {
                // Mostly a minority; one time in four a majority, so that writes fail and stay undecided.
                int count = chaos.nextInt(4) == 0 ? cluster.majority() : 1 + chaos.nextInt(size - cluster.majority());
                List<ClusterNode> victims = new ArrayList<>(cluster.nodes());
                Collections.shuffle(victims, chaos);
                victims = victims.subList(0, count);
                Fault fault = Fault.values()[chaos.nextInt(Fault.values().length)];
                victims.forEach(fault::inject);
                faults.add(fault + " " + victims.stream().map(ClusterNode::id).toList());
                Await.pause(500 + chaos.nextInt(2500)); // how long the fault lasts: the scenario's choice
                victims.forEach(fault::heal);
                cluster.awaitFullyConnected();
                load.awaitProgress(10, Duration.ofSeconds(60));
            }
        }
        Verify.finalReads(cluster, history, Verify.keys(history));
        System.out.printf("[kvorum-it] %d nodes, %d faults %s: %s%n", size, faults.size(), faults, history.summary());
        assertThat(history.ops()).as("acknowledged writes").anyMatch(o -> o.isWrite() && o.isAcked());
        assertThat(history.ops()).as("writes left undecided by the chaos")
                .anyMatch(o -> o.isWrite() && (o.outcome() == Outcome.MAYBE_BEFORE_ANSWER || o.outcome() == Outcome.MAYBE_ANY_TIME));
        Verify.noViolations(history);
    }

    /** 45% puts of unique values, 40% gets, 15% deletes, on {@value #KEYS} keys. */
    private static Workload.Generator randomOps() {
        return (client, seq, random) -> {
            String key = "h" + random.nextInt(KEYS);
            int dice = random.nextInt(100);
            if (dice < 45) {
                return new Workload.Step(Type.PUT, key, "c" + client + "-" + seq);
            }
            return new Workload.Step(dice < 85 ? Type.GET : Type.DELETE, key, null);
        };
    }
}
