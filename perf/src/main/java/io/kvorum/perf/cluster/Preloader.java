package io.kvorum.perf.cluster;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes key0..key{n-1} (the key space of the perf/wrk scripts) through one node with the Java
 * client, at most {@link #MAX_IN_FLIGHT} requests at a time, with a progress line on stderr. A
 * refused write (503 under overload) is retried up to {@link #ATTEMPTS} times; any other failure
 * stops the preload.
 */
public final class Preloader {

    static final int MAX_IN_FLIGHT = 256;
    static final int ATTEMPTS = 5;
    private static final Duration OVERALL_TIMEOUT = Duration.ofMinutes(30);

    private final URI node;
    private final PrintStream progress;

    public Preloader(URI node, PrintStream progress) {
        this.node = node;
        this.progress = progress;
    }

    public void preload(int keys, int valueBytes) throws IOException, InterruptedException {
        byte[] value = new byte[valueBytes];
        Arrays.fill(value, (byte) 'v');
        Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
        AtomicLong done = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long start = System.nanoTime();
        long lastPrint = 0;
        try (KvorumClient client = KvorumClient.create(node, Duration.ofSeconds(30))) {
            for (int k = 0; k < keys && failure.get() == null; k++) {
                if (!inFlight.tryAcquire(60, TimeUnit.SECONDS)) {
                    throw new IOException("preload stalled: no write finished for 60 s");
                }
                put(client, "key" + k, value, ATTEMPTS, inFlight, done, failure);
                long now = System.nanoTime();
                if (now - lastPrint > 200_000_000L) {
                    lastPrint = now;
                    printProgress(done.get(), keys, start);
                }
            }
            long deadline = System.nanoTime() + OVERALL_TIMEOUT.toNanos();
            while (!inFlight.tryAcquire(MAX_IN_FLIGHT, 200, TimeUnit.MILLISECONDS)) {
                printProgress(done.get(), keys, start);
                if (System.nanoTime() > deadline) {
                    throw new IOException("preload did not finish within " + OVERALL_TIMEOUT.toMinutes() + " min");
                }
            }
        }
        if (failure.get() != null) {
            throw new IOException("preload failed after " + done.get() + " keys: " + failure.get(), failure.get());
        }
        printProgress(done.get(), keys, start);
        progress.println();
    }

    private static void put(KvorumClient client, String key, byte[] value, int attemptsLeft, Semaphore inFlight,
                            AtomicLong done, AtomicReference<Throwable> failure) {
        client.put(key, value).whenComplete((ok, error) -> {
            if (error == null) {
                done.incrementAndGet();
                inFlight.release();
            } else if (attemptsLeft > 1 && isOverloaded(error)) {
                put(client, key, value, attemptsLeft - 1, inFlight, done, failure);
            } else {
                failure.compareAndSet(null, error);
                inFlight.release();
            }
        });
    }

    private static boolean isOverloaded(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause instanceof KvorumException k && k.status() == 503;
    }

    private void printProgress(long done, int total, long startNanos) {
        double seconds = Math.max(1e-3, (System.nanoTime() - startNanos) / 1e9);
        double perSecond = done / seconds;
        long eta = perSecond > 0 ? Math.round((total - done) / perSecond) : -1;
        progress.printf("\rpreload %5.1f%%  %,d/%,d keys  %,.0f keys/s  ETA %s   ",
                100.0 * done / Math.max(1, total), done, total, perSecond, eta < 0 ? "?" : eta + " s");
        progress.flush();
    }
}
