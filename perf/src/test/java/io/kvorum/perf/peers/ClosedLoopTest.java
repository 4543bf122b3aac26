package io.kvorum.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ClosedLoopTest {

    private final ScheduledExecutorService answers = Executors.newScheduledThreadPool(2);

    @AfterEach
    void stop() {
        answers.shutdownNow();
    }

    /** A target answering each put 1 ms later, on another thread, as a client's event loop does. */
    private final class RecordingTarget implements KeyValueTarget {
        final Set<String> written = ConcurrentHashMap.newKeySet();
        final AtomicInteger puts = new AtomicInteger();
        final AtomicInteger outstanding = new AtomicInteger();
        final AtomicInteger mostOutstanding = new AtomicInteger();

        @Override
        public CompletableFuture<?> put(byte[] key, byte[] value) {
            puts.incrementAndGet();
            written.add(new String(key, StandardCharsets.US_ASCII));
            mostOutstanding.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
            CompletableFuture<Void> answer = new CompletableFuture<>();
            answers.schedule(() -> {
                outstanding.decrementAndGet();
                answer.complete(null);
            }, 1, TimeUnit.MILLISECONDS);
            return answer;
        }

        @Override
        public CompletableFuture<?> get(byte[] key) {
            return CompletableFuture.failedFuture(new CompletionException(new IllegalStateException("no reads here")));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void thePreloadWritesEveryKeyOnceWithAtMostInFlightOutstandingThenEnds() throws Exception {
        RecordingTarget target = new RecordingTarget();
        Requests requests = new Requests(target, 2000, 100);

        LoadResult result = new ClosedLoop(16).run(requests.preload(), Duration.ofMinutes(1), Duration.ofSeconds(5));

        assertThat(result.requests()).isEqualTo(2000);
        assertThat(target.puts).hasValue(2000);
        assertThat(target.written).hasSize(2000).contains("key0", "key1999");
        assertThat(target.mostOutstanding.get()).isBetween(2, 16);
        assertThat(result.failures()).isEmpty();
    }

    @Test
    void failuresAreCountedByTheKindOfTheirCauseAndTheLoopStopsAtItsDeadline() throws Exception {
        RecordingTarget target = new RecordingTarget();
        Requests requests = new Requests(target, 100, 10);

        long start = System.nanoTime();
        LoadResult result = new ClosedLoop(4).run(requests.of(Requests.Mix.GET), Duration.ofMillis(200), Duration.ofSeconds(5));

        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5000);
        assertThat(result.requests()).isPositive();
        assertThat(result.failures()).containsOnlyKeys("IllegalStateException");
        assertThat(result.failureCount()).isEqualTo(result.requests());
    }

    @Test
    void aMixedLoadSendsBothReadsAndWrites() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        AtomicInteger writes = new AtomicInteger();
        KeyValueTarget counting = new KeyValueTarget() {
            @Override
            public CompletableFuture<?> put(byte[] key, byte[] value) {
                writes.incrementAndGet();
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<?> get(byte[] key) {
                reads.incrementAndGet();
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void close() {
            }
        };
        Requests requests = new Requests(counting, 10, 10);
        for (int i = 0; i < 10_000; i++) {
            requests.of(Requests.Mix.MIXED).get();
        }
        assertThat(reads.get()).isBetween(4_000, 6_000);
        assertThat(reads.get() + writes.get()).isEqualTo(10_000);
        assertThat(List.of(reads.get(), writes.get())).allMatch(n -> n > 0);
    }
}
