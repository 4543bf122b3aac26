package io.kvorum.node.cluster;

import static io.kvorum.node.cluster.ClusterScenarioSupport.delete;
import static io.kvorum.node.cluster.ClusterScenarioSupport.get;
import static io.kvorum.node.cluster.ClusterScenarioSupport.put;
import static io.kvorum.node.cluster.ClusterScenarioSupport.q;
import static io.kvorum.node.cluster.ClusterScenarioSupport.within;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.node.cluster.ClusterScenarioSupport.Answer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Keys of every {@link #R_PLUS_W_ABOVE_FROM} quorum, written once before the load starts, then a
 * writer (overwrites of half of them, one delete of a few others) and a reader (each read with
 * its key's read quorum, checked against what was acknowledged when it began) on threads of
 * their own, through the given nodes in turn. A value carries its write's sequence number, so
 * a read is stale when it answers a lower one, or absent where no delete was sent.
 */
public final class ContractLoad implements AutoCloseable {

    /** A write's ack and from, and the ack of a read with the same from: R + W > from. */
    public record Quorums(int writeAck, int from, int readAck) {
        public Options write() {
            return q(writeAck, from);
        }

        public Options read() {
            return q(readAck, from);
        }

        public String name() {
            return "w" + writeAck + "r" + readAck + "of" + from;
        }
    }

    /** What a change must keep readable for any from up to RF 3 (docs/operations.md#growing-and-shrinking-a-cluster). */
    public static final List<Quorums> R_PLUS_W_ABOVE_FROM = List.of(new Quorums(1, 1, 1), new Quorums(1, 2, 2),
            new Quorums(2, 3, 2), new Quorums(1, 3, 3));

    private static final int KEYS_PER_QUORUM = 40;
    private final Function<String, KvorumClient> clients;
    private final List<String> via;
    private final Map<String, Quorums> keys = new LinkedHashMap<>();
    /** Per key, the sequence number of its last acknowledged write, negated for a delete. */
    private final Map<String, Long> acknowledged = new ConcurrentHashMap<>();
    private final Set<String> deleteSent = ConcurrentHashMap.newKeySet();
    private final List<String> stale = new CopyOnWriteArrayList<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final AtomicInteger reads = new AtomicInteger();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> threads;

    /** @param clients the client of each node id in {@code via} */
    public ContractLoad(Function<String, KvorumClient> clients, List<String> via) {
        this(clients, via, "");
    }

    /**
     * @param clients the client of each node id in {@code via}
     * @param prefix  starts every key, so that loads one after another use keys of their own
     */
    public ContractLoad(Function<String, KvorumClient> clients, List<String> via, String prefix) {
        this.clients = clients;
        this.via = via;
        long seq = 1;
        for (Quorums quorums : R_PLUS_W_ABOVE_FROM) {
            for (int i = 0; i < KEYS_PER_QUORUM; i++) {
                String key = prefix + quorums.name() + "-" + i;
                keys.put(key, quorums);
                Answer a = put(clients.apply(via.get(i % via.size())), key, "s" + seq, quorums.write());
                assertThat(a.status()).as("preload " + key + ": " + a).isEqualTo(Answer.CREATED);
                acknowledged.put(key, seq++);
            }
        }
        long firstSeq = seq;
        threads = List.of(new Thread(() -> write(firstSeq), "contract-writer"), new Thread(this::read, "contract-reader"));
        threads.forEach(Thread::start);
    }

    /** Overwrites the even keys in turn; every seventh step deletes one of the keys that end in 1 or 5. */
    private void write(long firstSeq) {
        List<String> all = List.copyOf(keys.keySet());
        List<String> doomed = all.stream().filter(k -> k.endsWith("1") || k.endsWith("5")).toList();
        long seq = firstSeq;
        for (int step = 0; running.get(); step++, seq++) {
            String node = via.get(step % via.size());
            if (step % 7 == 0 && step / 7 < doomed.size()) {
                String key = doomed.get(step / 7);
                deleteSent.add(key);
                Answer a = delete(clients.apply(node), key, keys.get(key).write());
                record(a, Answer.ACCEPTED, key, -seq, "DELETE " + key + " via " + node);
            } else {
                String key = all.get(2 * (step % (all.size() / 2)));
                Answer a = put(clients.apply(node), key, "s" + seq, keys.get(key).write());
                record(a, Answer.CREATED, key, seq, "PUT " + key + " via " + node);
            }
        }
    }

    private void record(Answer a, int expected, String key, long seq, String what) {
        if (a.status() == expected) {
            acknowledged.put(key, seq);
        } else {
            failures.add(what + ": " + a);
        }
    }

    private void read() {
        List<String> all = List.copyOf(keys.keySet());
        Random random = new Random(7);
        for (int i = 0; running.get(); i++) {
            String key = all.get(random.nextInt(all.size()));
            String node = via.get(i % via.size());
            long floor = acknowledged.get(key);
            Answer a = get(clients.apply(node), key, keys.get(key).read());
            String problem = check(key, floor, a);
            if (problem != null) {
                stale.add("GET " + key + " via " + node + " during the load: " + problem);
            }
            reads.incrementAndGet();
        }
    }

    /** Why {@code a} is not what a read that began after {@code floor} was acknowledged may answer, or null. */
    private String check(String key, long floor, Answer a) {
        if (a.status() == Answer.NOT_FOUND) {
            return floor < 0 || deleteSent.contains(key) ? null : "absent, acknowledged s" + floor;
        }
        if (a.status() != Answer.OK) {
            failures.add("GET " + key + ": " + a);
            return null;
        }
        long seq = Long.parseLong(a.body().substring(1));
        return floor < 0 || seq < floor ? a.body() + ", acknowledged " + (floor < 0 ? "a delete" : "s" + floor) : null;
    }

    public int reads() {
        return reads.get();
    }

    /** Waits (bounded) until {@code n} more reads were checked. */
    public void awaitMoreReads(int n) {
        int target = reads.get() + n;
        within(Duration.ofSeconds(30)).until(() -> reads.get() >= target);
    }

    public void stop() throws InterruptedException {
        running.set(false);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    public void assertNoStaleRead() {
        assertThat(stale).as("stale reads (requests that failed: " + failures + ")").isEmpty();
    }

    /** Every key through every node of {@code nodes}, with its read quorum, once the load stopped. */
    public void assertEveryKeyReadsBack(List<String> nodes) {
        List<String> wrong = new ArrayList<>();
        for (String node : nodes) {
            for (Map.Entry<String, Quorums> e : keys.entrySet()) {
                String problem = check(e.getKey(), acknowledged.get(e.getKey()), get(clients.apply(node), e.getKey(), e.getValue().read()));
                if (problem != null) {
                    wrong.add(e.getKey() + " via " + node + ": " + problem);
                }
            }
        }
        assertThat(wrong).as("reads after the change (requests that failed: " + failures + ")").isEmpty();
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}

