package io.kvorum.node.metrics;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * What the node's metrics cost, in isolation from the rest of a request (a benchmark, not a test;
 * perf/README.md has the command and the figures):
 * <ul>
 * <li>recording one answered request the way the gateway and coordinator do on a single-node PUT:
 *     the latency read with {@code nanoTime}, the per-replica outcome, the request counter and the
 *     latency timer; on one thread and on two at once (the cores of this machine, sharing meters);
 * <li>rendering one scrape of {@code /metrics}, JVM binders included.
 * </ul>
 * The ratio that matters is the recording cost over what a request costs the node in all: at
 * 60,000 PUT/s a cost of 100 ns per request is 6 ms of CPU a second, 0.3% of two cores.
 */
public final class MetricsRecordingBenchmark {

    private static final int ROUNDS = 5;
    private static final long REQUESTS_PER_ROUND = 20_000_000L;
    private static final int SCRAPES = 200;

    public static void main(String[] args) throws InterruptedException {
        try (NodeMetrics metrics = new NodeMetrics("n1", List.of("n1", "n2", "n3"), Set.of("failed"))) {
            for (int threads : new int[] {1, 2}) {
                for (int round = 0; round < ROUNDS; round++) {
                    System.out.printf("recording, %d thread(s), round %d: %.1f ns per request%n", threads, round,
                            nanosPerRequest(metrics, threads));
                }
            }
            double[] scrapeMillis = new double[SCRAPES];
            int bytes = 0;
            for (int i = 0; i < SCRAPES; i++) {
                long start = System.nanoTime();
                bytes = metrics.scrape().length();
                scrapeMillis[i] = (System.nanoTime() - start) / 1e6;
            }
            double[] steady = Arrays.copyOfRange(scrapeMillis, SCRAPES / 2, SCRAPES);
            Arrays.sort(steady);
            System.out.printf("scrape: %,d characters, median %.2f ms, max %.2f ms (last %d of %d)%n", bytes,
                    steady[steady.length / 2], steady[steady.length - 1], steady.length, SCRAPES);
        }
    }

    /** Wall time per request recorded, each of {@code threads} recording its share at once. */
    private static double nanosPerRequest(NodeMetrics metrics, int threads) throws InterruptedException {
        NodeMetrics.ReplicaCounters self = metrics.replicas("n1");
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        long each = REQUESTS_PER_ROUND / threads;
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (long i = 0; i < each; i++) {
                    long start = System.nanoTime();
                    self.answered(NodeMetrics.ReplicaOutcome.OK);
                    metrics.requestAnswered(NodeMetrics.Op.PUT, 201, System.nanoTime() - start + 800_000);
                }
            });
            worker.start();
            workers.add(worker);
        }
        long start = System.nanoTime();
        go.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        // Per request per thread: the CPU one request's recording takes on the core it runs on.
        return (System.nanoTime() - start) / (double) each;
    }
}
