package io.kvorum.it;

import io.kvorum.client.KvorumClient;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.History.Op;
import io.kvorum.testkit.History.Type;
import io.kvorum.testkit.History;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Client threads that send requests to the nodes of a cluster in turn, whatever state the nodes
 * are in, and record every request in a {@link History}. Bounded: each thread stops at
 * {@link #close()} or after {@code maxOpsPerClient}, and each request after the client timeout.
 */
final class Workload implements AutoCloseable {

    /** What a client does next. */
    interface Generator {
        /** The next step of client {@code client}; {@code seq} counts its steps from 0. */
        Step next(int client, long seq, Random random);
    }

    record Step(Type type, String key, String value) {
    }

    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(3);
    private static final long MAX_OPS_PER_CLIENT = 200_000;

    private final History history;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();

    Workload(KvorumCluster cluster, History history, int clients, Generator generator, long seed) {
        this.history = history;
        List<ClusterNode> nodes = cluster.nodes();
        List<KvorumClient> kv = nodes.stream().map(n -> n.client(CLIENT_TIMEOUT)).toList();
        for (int c = 0; c < clients; c++) {
            int client = c;
            Random random = new Random(seed * 31 + c);
            Thread t = new Thread(() -> {
                try {
                    for (long seq = 0; seq < MAX_OPS_PER_CLIENT && !stopped.get(); seq++) {
                        int i = (int) ((client + seq) % nodes.size());
                        Step step = generator.next(client, seq, random);
                        Op op = history.perform(client, nodes.get(i).id(), kv.get(i), step.type(), step.key(), step.value());
                        if (op.isAcked()) {
                            acked.incrementAndGet();
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "client-" + c);
            t.setDaemon(true);
            threads.add(t);
        }
    }

    /** Unique keys: puts of {@code w<client>-<seq>}, and every fourth step a read of an earlier one. */
    static Generator uniquePuts() {
        return (client, seq, random) -> {
            if (seq % 4 == 3) {
                String key = "w" + client + "-" + random.nextInt((int) seq);
                return new Step(Type.GET, key, null);
            }
            String key = "w" + client + "-" + seq;
            return new Step(Type.PUT, key, key + "=v");
        };
    }

    Workload start() {
        threads.forEach(Thread::start);
        return this;
    }

    /** Requests answered with success so far. */
    long acked() {
        return acked.get();
    }

    /** Waits until {@code more} further requests have succeeded: load went on for a while. */
    void awaitProgress(long more, Duration bound) {
        long target = acked.get() + more;
        Await.until(more + " more successful requests", bound, () -> {
            rethrow();
            return acked.get() >= target;
        }, history::summary);
    }

    /** Stops the clients and waits for their last requests; fails if a client failed. */
    @Override
    public void close() {
        stopped.set(true);
        for (Thread t : threads) {
            try {
                t.join(CLIENT_TIMEOUT.toMillis() * 3);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not stop");
            }
        }
        rethrow();
    }

    private void rethrow() {
        Throwable e = failure.get();
        if (e != null) {
            throw new AssertionError("a client failed: " + e, e);
        }
    }
}
