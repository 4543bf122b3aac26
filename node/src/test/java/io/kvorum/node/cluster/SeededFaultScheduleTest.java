package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.transport.memory.SimulatedNetwork;
import io.kvorum.testkit.History;
import io.kvorum.testkit.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

/**
 * FoundationDB's discipline brought to a Dynamo store: for each seed, a 3- to 5-node cluster on
 * the {@link SimulatedNetwork} serves a mixed workload of quorum puts, deletes and gets while a
 * fault schedule drawn from the same seed cuts links one way or both, delays them (reordering
 * messages), makes them lossy, heals them, and kills nodes (never a majority). Then every link
 * heals and every node comes back, and:
 * <ul>
 *   <li>the history, final reads through every node included, passes {@link HistoryChecker}
 *       (docs/operations.md#how-replicas-converge: no lost acknowledged write, no read older than an acknowledged write it followed,
 *       as R + W > from with the default quorum);</li>
 *   <li>the replicas converge: after two {@code POST /v0/repair} through one node (the first
 *       gathers the newest versions there, the second spreads them), a third finds nothing left to
 *       exchange with any peer.</li>
 * </ul>
 *
 * <p>Seeds: {@code -Dkvorum.seeds=N} runs N seeds from {@code -Dkvorum.seedBase} (default: a base
 * drawn now and printed); {@code -Dkvorum.seed=S} replays seed S alone. A failing seed names the
 * command that replays it. Thread scheduling is not seeded, so a replay runs the same schedule
 * and workload, not the same interleaving.
 */
class SeededFaultScheduleTest extends ClusterScenarioSupport {

    private static final Duration FAULT_PHASE = Duration.ofMillis(600);
    private static final int CLIENTS = 4;
    private static final int KEYS_PER_CLIENT = 3;
    private static final Map<NodeOption, String> OPTIONS = Map.of(
            NodeOption.ANTI_ENTROPY_INTERVAL, "0", // rounds run on demand, at the end
            NodeOption.REQUEST_TIMEOUT, "300");

    SeededFaultScheduleTest() {
        super(MiniCluster.SIMULATED);
    }

    @TestFactory
    @Timeout(value = 15, unit = TimeUnit.MINUTES)
    Stream<DynamicTest> faultSchedules() {
        String one = System.getProperty("kvorum.seed");
        if (one != null) {
            long seed = Long.parseLong(one);
            return Stream.of(DynamicTest.dynamicTest("seed " + seed, () -> run(seed)));
        }
        int count = Integer.getInteger("kvorum.seeds", 200);
        long base = Long.getLong("kvorum.seedBase", new Random().nextInt(1_000_000) * 1000L);
        System.out.printf("[kvorum] SeededFaultScheduleTest: %d seeds from %d%n", count, base);
        return LongStream.range(base, base + count)
                .mapToObj(seed -> DynamicTest.dynamicTest("seed " + seed, () -> run(seed)));
    }

    private void run(long seed) throws Exception {
        Random random = new Random(seed);
        int n = 3 + random.nextInt(3);
        List<String> schedule = new ArrayList<>();
        try {
            MiniCluster.runWithNewCluster(MiniCluster.SIMULATED, n, OPTIONS, seed, c -> {
                History history = new History();
                List<String> keys = new ArrayList<>();
                List<Thread> clients = new ArrayList<>();
                long end = System.nanoTime() + FAULT_PHASE.toNanos();
                for (int i = 0; i < CLIENTS; i++) {
                    List<String> own = new ArrayList<>();
                    for (int k = 0; k < KEYS_PER_CLIENT; k++) {
                        own.add("s" + seed + "-c" + i + "-k" + k);
                    }
                    keys.addAll(own);
                    int client = i;
                    long clientSeed = random.nextLong();
                    Thread t = new Thread(() -> workload(c, history, client, own, clientSeed, end), "client-" + i);
                    clients.add(t);
                    t.start();
                }
                faults(c, random, end, schedule);
                c.network().healAll();
                schedule.add("heal all");
                for (Thread t : clients) {
                    t.join(TimeUnit.SECONDS.toMillis(30));
                    assertThat(t.isAlive()).as(t.getName() + " still running").isFalse();
                }
                for (String id : c.ids()) {
                    if (!c.isUp(id)) {
                        c.restart(id);
                        schedule.add("restart " + id);
                    }
                }
                for (String key : keys) {
                    for (String via : c.ids()) {
                        history.perform(-1, via, c.client(via), History.Type.GET, key, null);
                    }
                }
                assertThat(HistoryChecker.check(history.ops())).as("violations in " + history.summary()).isEmpty();

                // A run through n1 leaves n1 with the newest of every peer; a second one gives that to
                // every peer; a third must find nothing to exchange: every replica equals n1's.
                String hub = c.ids().get(0);
                repair(c, hub);
                repair(c, hub);
                JsonObject report = repair(c, hub);
                assertThat(report.get("recordsSent").getAsLong() + report.get("recordsReceived").getAsLong())
                        .as("records a third repair through " + hub + " still exchanged: " + report).isZero();
            });
        } catch (Throwable t) {
            throw new AssertionError("seed " + seed + " failed (" + n + " nodes; schedule " + schedule + "); replay: "
                    + "mvn -pl node -am test -Dtest=SeededFaultScheduleTest -Dkvorum.seed=" + seed
                    + " -Dsurefire.failIfNoSpecifiedTests=false", t);
        }
    }

    /** One client: sequential quorum operations on its own keys through random live nodes, until {@code end}. */
    private static void workload(MiniCluster c, History history, int client, List<String> keys, long seed, long end) {
        Random random = new Random(seed);
        int written = 0;
        while (System.nanoTime() < end) {
            List<String> up = c.upNodes();
            if (up.isEmpty()) {
                continue;
            }
            String via = up.get(random.nextInt(up.size()));
            String key = keys.get(random.nextInt(keys.size()));
            KvorumClient kv = c.client(via);
            int dice = random.nextInt(100);
            if (dice < 50) {
                history.perform(client, via, kv, History.Type.PUT, key, key + "=" + (written++));
            } else if (dice < 65) {
                history.perform(client, via, kv, History.Type.DELETE, key, null);
            } else {
                history.perform(client, via, kv, History.Type.GET, key, null);
            }
        }
    }

    /** Applies a fault every 50-200 ms until {@code end}; never more than a minority of nodes down. */
    private static void faults(MiniCluster c, Random random, long end, List<String> schedule) throws Exception {
        SimulatedNetwork net = c.network();
        List<String> ids = c.ids();
        int maxDown = (ids.size() - 1) / 2;
        while (System.nanoTime() < end) {
            Thread.sleep(50 + random.nextInt(150)); // the schedule's own pace, not a wait for a condition
            String a = ids.get(random.nextInt(ids.size()));
            String b = ids.get(random.nextInt(ids.size()));
            int dice = random.nextInt(100);
            if (a.equals(b) && dice < 65) {
                continue;
            }
            if (dice < 20) {
                net.cut(a, b);
                schedule.add("cut " + a + "->" + b);
            } else if (dice < 30) {
                net.partition(a, b);
                schedule.add("partition " + a + "|" + b);
            } else if (dice < 45) {
                int ms = 5 + random.nextInt(80);
                net.delay(a, b, Duration.ofMillis(ms));
                schedule.add("delay " + a + "->" + b + " " + ms + "ms");
            } else if (dice < 55) {
                net.dropRate(a, b, 0.3);
                schedule.add("lossy " + a + "->" + b);
            } else if (dice < 65) {
                net.heal(a, b);
                schedule.add("heal " + a + "->" + b);
            } else if (dice < 80) {
                net.healAll();
                schedule.add("heal all");
            } else if (ids.size() - c.upNodes().size() < maxDown && c.isUp(a)) {
                c.kill(a);
                schedule.add("kill " + a);
            }
        }
    }

    private static JsonObject repair(MiniCluster c, String via) throws Exception {
        Answer answer = raw(c, via, "POST", "/v0/repair", null);
        assertThat(answer.status()).as("POST /v0/repair through " + via + ": " + answer.body()).isEqualTo(Answer.OK);
        return JsonParser.parseString(answer.body()).getAsJsonObject();
    }
}
