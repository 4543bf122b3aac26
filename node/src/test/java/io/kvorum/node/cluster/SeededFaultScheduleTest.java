package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.node.cluster.ContractLoad.Quorums;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.time.StepGuardedClock;
import io.kvorum.node.transport.memory.SimulatedNetwork;
import io.kvorum.testkit.History;
import io.kvorum.testkit.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
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
 * <p>Fault families ({@link Family}), each in its own tenth of the seeds, switched on with
 * {@code -Dkvorum.faults=wipe,grace,clock,membership,clock-jump} (or {@code all}; default
 * {@link #DEFAULT_FAULTS}): a disk wiped and the node started again; a node down past a short
 * {@code --tombstone-grace} while its keys are deleted; wall clocks skewed within
 * {@code --max-clock-offset} (the checker then allows writes to be ordered against real time by
 * the clocks' spread) and, with clock-jump, far beyond it; a join or a leave under keys each
 * written and read with one ack/from of R + W > from. A seed's family is drawn apart from its
 * schedule, so a seed names the same family whichever are on; a family that is off leaves its
 * seeds to links and kills. After the repairs every key is read through every node again, so
 * that what repair spread is checked too.
 *
 * <p>Seeds: {@code -Dkvorum.seeds=N} runs N seeds from {@code -Dkvorum.seedBase} (default: a base
 * drawn now and printed); {@code -Dkvorum.seed=S} (or {@code S1,S2,...}) replays seeds. A failing
 * seed names the command that replays it, families included. Thread scheduling is not seeded, so
 * a replay runs the same schedule and workload, not the same interleaving: which write a wipe or
 * a clock jump catches, and so whether a violation shows, varies from run to run.
 */
class SeededFaultScheduleTest extends ClusterScenarioSupport {

    private static final Duration FAULT_PHASE = Duration.ofMillis(600);
    private static final int CLIENTS = 4;
    private static final int KEYS_PER_CLIENT = 3;
    private static final Map<NodeOption, String> OPTIONS = Map.of(
            NodeOption.ANTI_ENTROPY_INTERVAL, "0", // rounds run on demand, at the end
            NodeOption.REQUEST_TIMEOUT, "300");

    /** The fault families beyond links and kills; each takes its own share of the seeds. */
    enum Family {
        /** A node is killed, its data dir deleted and it is started again, as after a replaced disk. */
        WIPE,
        /** A node stays down past a short --tombstone-grace while its keys are deleted, then returns. */
        GRACE,
        /** Nodes' wall clocks are skewed from each other and jump, within --max-clock-offset. */
        CLOCK,
        /** A node joins, or a member leaves, under a workload of several ack/from. */
        MEMBERSHIP,
        /** As {@link #CLOCK}, and some clocks jump far beyond --max-clock-offset, ahead or back. */
        CLOCK_JUMP;

        /** The name in {@code -Dkvorum.faults}. */
        String property() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** The families run when {@code -Dkvorum.faults} is not given: all of them. */
    static final String DEFAULT_FAULTS = "wipe,grace,clock,membership,clock-jump";
    /** How many seeds in ten each enabled family takes (the rest run links and kills only). */
    private static final int SHARE_IN_TEN = 1;

    private static final long TOMBSTONE_GRACE_MILLIS = 1000;
    private static final long PURGE_INTERVAL_MILLIS = 100;
    private static final long MAX_CLOCK_OFFSET_MILLIS = 500;
    /** Skews within the bound go up to this either way; skews beyond it start at three times the bound. */
    private static final long SMALL_SKEW_MILLIS = 200;

    /** Requests that name no ack/from: the cluster's default quorum. */
    private static final Quorums DEFAULT_QUORUM = new Quorums(0, 0, 0);
    /**
     * The quorums of membership seeds, one per key for every request on it: R + W > from
     * (docs/operations.md#how-replicas-converge), those a change must keep readable and W=3 R=1.
     */
    private static final List<Quorums> QUORUMS = Stream.concat(ContractLoad.R_PLUS_W_ABOVE_FROM.stream(),
            Stream.of(new Quorums(3, 3, 1))).toList();

    SeededFaultScheduleTest() {
        super(MiniCluster.SIMULATED);
    }

    @TestFactory
    @Timeout(value = 15, unit = TimeUnit.MINUTES)
    Stream<DynamicTest> faultSchedules() {
        String one = System.getProperty("kvorum.seed");
        if (one != null) { // one seed, or several separated by commas
            return Arrays.stream(one.split(",")).map(String::trim).map(Long::parseLong)
                    .map(seed -> DynamicTest.dynamicTest("seed " + seed, () -> run(seed)));
        }
        int count = Integer.getInteger("kvorum.seeds", 200);
        long base = Long.getLong("kvorum.seedBase", new Random().nextInt(1_000_000) * 1000L);
        System.out.printf("[kvorum] SeededFaultScheduleTest: %d seeds from %d, fault families %s%n", count, base,
                enabledFamilies());
        return LongStream.range(base, base + count)
                .mapToObj(seed -> DynamicTest.dynamicTest("seed " + seed, () -> run(seed)));
    }

    /**
     * {@code -Dkvorum.faults=wipe,grace,clock,membership,clock-jump} (or {@code all}, or {@code none});
     * default {@link #DEFAULT_FAULTS}.
     */
    static Set<Family> enabledFamilies() {
        String spec = System.getProperty("kvorum.faults", DEFAULT_FAULTS).trim().toLowerCase(Locale.ROOT);
        if (spec.equals("all")) {
            return EnumSet.allOf(Family.class);
        }
        Set<Family> families = EnumSet.noneOf(Family.class);
        for (String name : spec.split(",")) {
            if (!name.isBlank() && !name.trim().equals("none")) {
                families.add(Family.valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_')));
            }
        }
        return families;
    }

    /**
     * The family seed {@code seed} runs, or null for links and kills only. Drawn apart from the
     * schedule's own stream, so that a seed names the same family whichever families are enabled
     * (a disabled one leaves its seeds to links and kills).
     */
    static Family familyOf(long seed, Set<Family> enabled) {
        int slot = new SplittableRandom(seed).nextInt(10);
        Family[] all = Family.values();
        Family family = slot < all.length * SHARE_IN_TEN ? all[slot / SHARE_IN_TEN] : null;
        return family != null && enabled.contains(family) ? family : null;
    }

    /** What one seed's schedule did that its end must know: the nodes it changed, the clock spread. */
    private static final class Plan {
        final Family family;
        long minSkew;
        long maxSkew;
        /**
         * One disk at most is lost per seed: two lost before the first is rebuilt may hold the only
         * copies of a write acknowledged by two replicas, which no store can keep.
         */
        boolean wipeInPhase;
        boolean wipedInPhase;
        /** The node wiped in the phase, until it is started again. */
        String wiped;
        String graceVictim;
        long graceVictimDownUntilNanos;
        String joined;
        String leaving;

        Plan(Family family) {
            this.family = family;
        }

        /** Per node whose clock was set far ahead: when, in monotonic nanoseconds, until set again. */
        final Map<String, Long> aheadSinceNanos = new HashMap<>();
        /** Per node, the skew within the bound its clock had last (0 when never set). */
        final Map<String, Long> smallSkews = new HashMap<>();

        /**
         * The most the clocks nodes stamp writes with were apart at any time (0 unskewed): skews
         * within the bound, and how far a clock set far ahead got before it was set again, as a
         * node takes a forward step in gradually (at most {@value StepGuardedClock#CATCH_UP_PERCENT}% faster than
         * time passes, docs/operations.md#clocks), so it stamps within the bound for a while.
         */
        long clockSpreadMillis() {
            return maxSkew - minSkew;
        }

        /** Node {@code id}'s clock was set {@code millis} from true time. */
        void skewed(String id, long millis, boolean small) {
            Long aheadSince = aheadSinceNanos.remove(id);
            if (aheadSince != null) {
                long drifted = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - aheadSince) * StepGuardedClock.CATCH_UP_PERCENT / 100;
                maxSkew = Math.max(maxSkew, smallSkews.getOrDefault(id, 0L) + drifted + 1);
            }
            if (small) {
                smallSkews.put(id, millis);
                minSkew = Math.min(minSkew, millis);
                maxSkew = Math.max(maxSkew, millis);
            } else if (millis > 0) {
                aheadSinceNanos.put(id, System.nanoTime());
            }
        }
    }

    private static Map<NodeOption, String> options(Family family) {
        Map<NodeOption, String> options = new EnumMap<>(NodeOption.class);
        options.putAll(OPTIONS);
        if (family == Family.WIPE) {
            // No hints: a replica that missed a write stays without it until repair, as when its hint
            // was lost, so that a read pairing it with the wiped node shows what that node answers.
            options.put(NodeOption.HINT_MAX_AGE, "0");
        } else if (family == Family.GRACE) {
            options.put(NodeOption.TOMBSTONE_GRACE, Long.toString(TOMBSTONE_GRACE_MILLIS));
            options.put(NodeOption.HINT_MAX_AGE, Long.toString(TOMBSTONE_GRACE_MILLIS * 2 / 5));
            options.put(NodeOption.PURGE_INTERVAL, Long.toString(PURGE_INTERVAL_MILLIS));
        } else if (family == Family.CLOCK || family == Family.CLOCK_JUMP) {
            options.put(NodeOption.MAX_CLOCK_OFFSET, Long.toString(MAX_CLOCK_OFFSET_MILLIS));
        } else if (family == Family.MEMBERSHIP) {
            options.put(NodeOption.REPLICATION_FACTOR, "3"); // fixed, while members come and go
        }
        return options;
    }

    private void run(long seed) {
        Random random = new Random(seed);
        int n = 3 + random.nextInt(3);
        Set<Family> enabled = enabledFamilies();
        Plan plan = new Plan(familyOf(seed, enabled));
        List<String> schedule = new ArrayList<>();
        try {
            MiniCluster.runWithNewCluster(MiniCluster.SIMULATED, n, options(plan.family), seed, c -> {
                History history = new History();
                Map<String, Quorums> keys = new LinkedHashMap<>();
                List<Thread> clients = new ArrayList<>();
                long end = System.nanoTime() + FAULT_PHASE.toNanos();
                for (int i = 0; i < CLIENTS; i++) {
                    Map<String, Quorums> own = new LinkedHashMap<>();
                    for (int k = 0; k < KEYS_PER_CLIENT; k++) {
                        own.put("s" + seed + "-c" + i + "-k" + k, plan.family == Family.MEMBERSHIP
                                ? QUORUMS.get(random.nextInt(QUORUMS.size())) : DEFAULT_QUORUM);
                    }
                    keys.putAll(own);
                    int client = i;
                    long clientSeed = random.nextLong();
                    Thread t = new Thread(() -> workload(c, history, client, own, clientSeed, end), "client-" + i);
                    clients.add(t);
                    t.start();
                }
                if (plan.family == Family.MEMBERSHIP) {
                    schedule.add("quorums " + keys.values().stream().map(Quorums::name).toList());
                }
                faults(c, random, end, plan, schedule);
                if (plan.family == Family.WIPE && !plan.wipedInPhase) {
                    // The disk is lost at the end, when no later write refills what it held.
                    String victim = c.ids().get(random.nextInt(c.size()));
                    if (c.isUp(victim)) {
                        c.kill(victim);
                    }
                    c.wipe(victim);
                    schedule.add("kill " + victim + ", wipe its disk");
                }
                c.network().healAll();
                schedule.add("heal all");
                for (Thread t : clients) {
                    t.join(TimeUnit.SECONDS.toMillis(30));
                    assertThat(t.isAlive()).as(t.getName() + " still running").isFalse();
                }
                settle(c, plan, schedule);
                List<String> serving = c.ids().stream().filter(id -> !id.equals(plan.leaving)).toList();
                readEverything(c, history, keys, serving);
                assertThat(HistoryChecker.check(history.ops(), plan.clockSpreadMillis()))
                        .as("violations in " + history.summary()).isEmpty();

                // A run through n1 leaves n1 with the newest of every peer; a second one gives that to
                // every peer; a third must find nothing to exchange: every replica equals n1's.
                String hub = c.ids().get(0);
                repair(c, hub);
                repair(c, hub);
                JsonObject report = repair(c, hub);
                if (plan.family == Family.GRACE) {
                    // Tombstones past the short grace are purged between the runs, by each replica
                    // once it knows every other holds them, so not by all at once: a run may hand one
                    // back to a replica that dropped it. No value may still differ (values have bytes).
                    assertThat(report.get("bytesSent").getAsLong() + report.get("bytesReceived").getAsLong())
                            .as("value bytes a third repair through " + hub + " still exchanged: " + report).isZero();
                } else {
                    assertThat(report.get("recordsSent").getAsLong() + report.get("recordsReceived").getAsLong())
                            .as("records a third repair through " + hub + " still exchanged: " + report).isZero();
                }
                // What repair spread must still be what the history allows (a deleted value stays deleted).
                readEverything(c, history, keys, serving);
                assertThat(HistoryChecker.check(history.ops(), plan.clockSpreadMillis()))
                        .as("violations after repair in " + history.summary()).isEmpty();
            });
        } catch (Throwable t) {
            String faults = enabled.stream().map(Family::property).collect(Collectors.joining(","));
            throw new AssertionError("seed " + seed + " failed (" + n + " nodes; family "
                    + (plan.family == null ? "none" : plan.family.property())
                    + "; schedule " + schedule + "); replay: "
                    + "mvn -pl node -am test -Dtest=SeededFaultScheduleTest -Dkvorum.seed=" + seed
                    + " -Dkvorum.faults=" + (faults.isEmpty() ? "none" : faults)
                    + " -Dsurefire.failIfNoSpecifiedTests=false", t);
        }
    }

    /**
     * After the fault phase: the grace victim stays down past the grace, clocks go back to true
     * time, every node comes back, and a membership change completes.
     */
    private static void settle(MiniCluster c, Plan plan, List<String> schedule) throws Exception {
        if (plan.graceVictim != null) {
            long left = plan.graceVictimDownUntilNanos - System.nanoTime();
            if (left > 0) {
                Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left) + 1); // the schedule's downtime, not a wait for a condition
            }
        }
        if (plan.family == Family.CLOCK || plan.family == Family.CLOCK_JUMP) {
            for (String id : c.ids()) {
                c.clock(id).setSkew(Duration.ZERO);
                plan.skewed(id, 0, true);
            }
            schedule.add("clocks true");
        }
        for (String id : c.ids()) {
            if (id.equals(plan.leaving) && !c.isUp(id) && hasLeft(c, id)) {
                // Killed after its leave completed: like any node that left, it refuses to start.
                schedule.add("leaving " + id + " left while down; not restarted");
                continue;
            }
            if (!c.isUp(id)) {
                c.restart(id);
                schedule.add("restart " + id);
            }
        }
        if (plan.joined != null) {
            MembershipScenarios.awaitState(c, c.ids(), plan.joined, "normal");
        }
        if (plan.leaving != null) {
            List<String> staying = c.ids().stream().filter(id -> !id.equals(plan.leaving)).toList();
            MembershipScenarios.awaitState(c, staying, plan.leaving, "absent");
            if (c.isUp(plan.leaving)) {
                c.stop(plan.leaving);
                schedule.add("stop " + plan.leaving + " (left)");
            }
        }
    }

    /** Whether a node that is down stored a membership that no longer names it: its leave completed. */
    private static boolean hasLeft(MiniCluster c, String id) throws Exception {
        Membership stored = new MembershipStore(c.config(id).dataDir()).load();
        return stored != null && stored.topology().member(id) == null;
    }

    private static void readEverything(MiniCluster c, History history, Map<String, Quorums> keys, List<String> via) {
        keys.forEach((key, quorums) -> {
            for (String node : via) {
                history.perform(-1, node, c.client(node), History.Type.GET, key, null, quorums.read());
            }
        });
    }

    /** One client: sequential quorum operations on its own keys through random live nodes, until {@code end}. */
    private static void workload(MiniCluster c, History history, int client, Map<String, Quorums> quorumsByKey, long seed, long end) {
        Random random = new Random(seed);
        List<String> keys = List.copyOf(quorumsByKey.keySet());
        int written = 0;
        while (System.nanoTime() < end) {
            List<String> up = c.upNodes();
            if (up.isEmpty()) {
                continue;
            }
            String via = up.get(random.nextInt(up.size()));
            String key = keys.get(random.nextInt(keys.size()));
            Quorums quorums = quorumsByKey.get(key);
            KvorumClient kv = c.client(via);
            int dice = random.nextInt(100);
            if (dice < 50) {
                history.perform(client, via, kv, History.Type.PUT, key, key + "=" + (written++), quorums.write());
            } else if (dice < 65) {
                history.perform(client, via, kv, History.Type.DELETE, key, null, quorums.write());
            } else {
                history.perform(client, via, kv, History.Type.GET, key, null, quorums.read());
            }
        }
    }

    /** Applies a fault every 50-200 ms until {@code end}; never more than a minority of nodes down. */
    private static void faults(MiniCluster c, Random random, long end, Plan plan, List<String> schedule) throws Exception {
        SimulatedNetwork net = c.network();
        if (plan.family == Family.WIPE) {
            plan.wipeInPhase = random.nextBoolean(); // else at the end of the phase
        } else if (plan.family == Family.GRACE) {
            Thread.sleep(100 + random.nextInt(100)); // its keys get values first
            plan.graceVictim = c.ids().get(random.nextInt(c.size()));
            c.kill(plan.graceVictim);
            // Down until every delete made while it is down is older than the grace, and purged.
            plan.graceVictimDownUntilNanos = end + TimeUnit.MILLISECONDS.toNanos(TOMBSTONE_GRACE_MILLIS + 3 * PURGE_INTERVAL_MILLIS);
            schedule.add("kill " + plan.graceVictim + " past the tombstone grace");
        } else if (plan.family == Family.MEMBERSHIP) {
            Thread.sleep(50 + random.nextInt(100));
            changeMembership(c, random, plan, schedule);
        }
        while (System.nanoTime() < end) {
            Thread.sleep(50 + random.nextInt(150)); // the schedule's own pace, not a wait for a condition
            List<String> ids = c.ids(); // a join adds one
            int maxDown = (ids.size() - 1) / 2;
            if (plan.wiped != null) {
                c.restart(plan.wiped);
                schedule.add("restart " + plan.wiped + " on an empty disk");
                plan.wiped = null;
                continue;
            }
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
            } else if ((plan.family == Family.CLOCK || plan.family == Family.CLOCK_JUMP) && dice < 92) {
                skew(c, random, a, plan.family == Family.CLOCK_JUMP, plan, schedule);
            } else if (ids.size() - c.upNodes().size() < maxDown && c.isUp(a)) {
                c.kill(a);
                if (plan.family == Family.WIPE && plan.wipeInPhase && !plan.wipedInPhase) {
                    c.wipe(a);
                    plan.wiped = a; // started again at the next step
                    plan.wipedInPhase = true;
                    schedule.add("kill " + a + ", wipe its disk");
                } else {
                    schedule.add("kill " + a);
                }
            }
        }
    }

    /**
     * Sets a node's clock: mostly within the bound, sometimes true, and with {@code beyond} sometimes
     * far beyond the bound either way.
     */
    private static void skew(MiniCluster c, Random random, String id, boolean beyond, Plan plan, List<String> schedule) {
        int kind = random.nextInt(beyond ? 10 : 7);
        long millis;
        if (kind < 2) {
            millis = 0;
        } else if (kind < 7) {
            millis = random.nextInt((int) (2 * SMALL_SKEW_MILLIS + 1)) - SMALL_SKEW_MILLIS;
        } else {
            millis = (random.nextBoolean() ? 1 : -1) * (3 * MAX_CLOCK_OFFSET_MILLIS + random.nextInt((int) (2 * MAX_CLOCK_OFFSET_MILLIS)));
        }
        c.clock(id).setSkew(Duration.ofMillis(millis));
        plan.skewed(id, millis, Math.abs(millis) <= SMALL_SKEW_MILLIS);
        schedule.add("clock " + id + " " + (millis >= 0 ? "+" : "") + millis + "ms");
    }

    /** A join of a new node, or (from four nodes up) a leave of a member other than n1, the repair hub. */
    private static void changeMembership(MiniCluster c, Random random, Plan plan, List<String> schedule) throws Exception {
        List<String> ids = c.ids();
        if (ids.size() >= 4 && random.nextBoolean()) {
            String leaving = ids.get(1 + random.nextInt(ids.size() - 1));
            String via = ids.get(random.nextInt(ids.size()));
            Answer leave = raw(c, via, "POST", "/v0/cluster/leave?id=" + leaving, null);
            assertThat(leave.status()).as("leave of " + leaving + " via " + via + ": " + leave).isEqualTo(Answer.ACCEPTED);
            plan.leaving = leaving;
            schedule.add("leave " + leaving + " via " + via);
        } else {
            String seed = ids.get(random.nextInt(ids.size()));
            plan.joined = c.join(List.of(seed));
            schedule.add("join " + plan.joined + " via " + seed);
        }
    }

    private static JsonObject repair(MiniCluster c, String via) throws Exception {
        Answer answer = raw(c, via, "POST", "/v0/repair", null);
        assertThat(answer.status()).as("POST /v0/repair through " + via + ": " + answer.body()).isEqualTo(Answer.OK);
        return JsonParser.parseString(answer.body()).getAsJsonObject();
    }
}
