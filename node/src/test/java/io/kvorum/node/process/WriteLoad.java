package io.kvorum.node.process;

import io.kvorum.client.KvorumClient;
import io.kvorum.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes distinct keys with distinct values through a {@link KvorumClient}, at most
 * {@code parallelism} at a time, and records the outcome of each: acknowledged (the node answered
 * {@code 201}) or failed (with what). Each key is written once, so "acknowledged" means "this exact
 * value must be readable after a restart".
 *
 * <p>Keys are {@code prefix/000000}, {@code prefix/000001}, ...; each value starts with its key and
 * continues with 0 to 1024 random bytes, so no two are equal and any byte may occur.
 */
final class WriteLoad {

    private final KvorumClient client;
    private final String prefix;
    private final Semaphore permits;
    private final Random random;
    private final AtomicInteger outstanding = new AtomicInteger();
    private final Map<String, byte[]> attempted = new ConcurrentHashMap<>();
    private final Map<String, byte[]> acknowledged = new ConcurrentHashMap<>();
    private final Map<String, Throwable> failed = new ConcurrentHashMap<>();
    private volatile boolean stopping;
    private Thread producer;
    private int next;

    WriteLoad(KvorumClient client, String prefix, int parallelism, long seed) {
        this.client = client;
        this.prefix = prefix;
        this.permits = new Semaphore(parallelism);
        this.random = new Random(seed);
    }

    /** Writes {@code count} new keys and waits until each has been answered or has failed. */
    void writeAll(int count, Duration bound) {
        for (int i = 0; i < count; i++) {
            permits.acquireUninterruptibly();
            issue();
        }
        awaitQuiet(bound);
    }

    /** Starts a thread that keeps {@code parallelism} writes of new keys in flight until {@link #stop}. */
    void startContinuous() {
        producer = new Thread(() -> {
            try {
                while (!stopping) {
                    if (permits.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                        if (stopping) {
                            permits.release();
                            return;
                        }
                        issue();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "write-load-" + prefix);
        producer.setDaemon(true);
        producer.start();
    }

    /**
     * Stops issuing writes and waits until every write issued so far has been answered or has
     * failed; a write that does neither within {@code bound} fails the test (a hang).
     */
    void stop(Duration bound) {
        stopping = true;
        if (producer != null) {
            try {
                producer.join(bound.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            if (producer.isAlive()) {
                throw new AssertionError("the write-load thread did not stop within " + bound.toMillis() + " ms");
            }
        }
        awaitQuiet(bound);
    }

    private void awaitQuiet(Duration bound) {
        Await.until("every write to be answered or to fail (" + outstanding.get() + " outstanding)", bound,
                () -> outstanding.get() == 0);
    }

    /** Only the producer thread (or the caller of writeAll) issues; it holds a permit. */
    private void issue() {
        String key = String.format("%s/%06d", prefix, next++);
        byte[] head = (key + "|").getBytes(StandardCharsets.UTF_8);
        byte[] value = Arrays.copyOf(head, head.length + random.nextInt(1025));
        byte[] tail = new byte[value.length - head.length];
        random.nextBytes(tail);
        System.arraycopy(tail, 0, value, head.length, tail.length);
        attempted.put(key, value);
        outstanding.incrementAndGet();
        CompletableFuture<Void> put;
        try {
            put = client.put(key, value);
        } catch (RuntimeException e) {
            put = CompletableFuture.failedFuture(e);
        }
        put.whenComplete((ok, error) -> {
            if (error == null) {
                acknowledged.put(key, value);
            } else {
                failed.put(key, unwrap(error));
            }
            outstanding.decrementAndGet();
            permits.release();
        });
    }

    /** Writes issued and not yet answered. */
    int inFlight() {
        return outstanding.get();
    }

    int acknowledgedCount() {
        return acknowledged.size();
    }

    /** Keys the node answered {@code 201} for, with their values. */
    Map<String, byte[]> acknowledged() {
        return Map.copyOf(acknowledged);
    }

    /** Every key issued, with its value. */
    Map<String, byte[]> attempted() {
        return Map.copyOf(attempted);
    }

    /** Keys whose write failed, with the cause. */
    Map<String, Throwable> failed() {
        return Map.copyOf(failed);
    }

    static Throwable unwrap(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /**
     * Reads every key of {@code keys}, at most {@code parallelism} at a time.
     *
     * @return each key's value, or empty when the node answered 404
     * @throws AssertionError when a read fails or is not answered within {@code bound}
     */
    static Map<String, Optional<byte[]>> readAll(KvorumClient client, Iterable<String> keys, int parallelism,
                                                 Duration bound) {
        Semaphore permits = new Semaphore(parallelism);
        Map<String, Optional<byte[]>> values = new ConcurrentHashMap<>();
        Map<String, Throwable> errors = new ConcurrentHashMap<>();
        AtomicInteger pending = new AtomicInteger();
        for (String key : keys) {
            permits.acquireUninterruptibly();
            pending.incrementAndGet();
            client.get(key).whenComplete((v, e) -> {
                if (e == null) {
                    values.put(key, v);
                } else {
                    errors.put(key, unwrap(e));
                }
                pending.decrementAndGet();
                permits.release();
            });
        }
        Await.until("every read to be answered", bound, () -> pending.get() == 0);
        if (!errors.isEmpty()) {
            Map.Entry<String, Throwable> first = errors.entrySet().iterator().next();
            throw new AssertionError(errors.size() + " reads failed, e.g. " + first.getKey(), first.getValue());
        }
        return new HashMap<>(values);
    }

    /**
     * Compares what was read with what must be there.
     *
     * @return one line per key that is absent or holds other bytes (the first 20, then a count of
     *         the rest); empty when all match
     */
    static List<String> mismatches(Map<String, byte[]> expected, Map<String, Optional<byte[]>> read) {
        List<String> problems = new ArrayList<>();
        expected.keySet().stream().sorted().forEach(key -> {
            Optional<byte[]> got = read.get(key);
            if (got == null || got.isEmpty()) {
                problems.add(key + ": absent, expected " + expected.get(key).length + " bytes");
            } else if (!Arrays.equals(got.get(), expected.get(key))) {
                problems.add(key + ": read " + got.get().length + " bytes that differ from the "
                        + expected.get(key).length + " written");
            }
        });
        if (problems.size() > 20) {
            int more = problems.size() - 20;
            problems.subList(20, problems.size()).clear();
            problems.add("... and " + more + " more");
        }
        return problems;
    }
}
