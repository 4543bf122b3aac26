package io.kvorum.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OpenLoopTest {

    private final ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        answers.shutdownNow();
    }

    @Test
    void requestIIsDueAtIOverTheRateFromTheStartWithoutAccumulatedRounding() {
        assertThat(OpenLoop.intendedStartNanos(1_000, 0, 3000)).isEqualTo(1_000);
        assertThat(OpenLoop.intendedStartNanos(1_000, 1, 3000)).isEqualTo(1_000 + 333_333);
        // 3000 steps of a rounded 333,333 ns would end 1 µs early; the schedule lands on the second exactly
        assertThat(OpenLoop.intendedStartNanos(1_000, 3000, 3000)).isEqualTo(1_000 + 1_000_000_000L);
        assertThat(OpenLoop.intendedStartNanos(0, 7_200_000, 2000)).isEqualTo(3_600_000_000_000L);
        assertThat(new OpenLoop(3000, Duration.ofSeconds(60), 1, Duration.ZERO, 1).scheduled()).isEqualTo(180_000);
    }

    /**
     * One answer held back 300 ms while only one request may be unanswered: the requests due during
     * the stall cannot be sent, and each counts its wait from when it was due. Timed from the send,
     * one request of 2,000 would be slow and p95 well under a millisecond.
     */
    @Test
    void aStalledAnswerDelaysEveryRequestDueDuringItAndThePercentilesShowThem() throws Exception {
        AtomicLong sent = new AtomicLong();
        Supplier<CompletableFuture<?>> requests = () -> {
            if (sent.incrementAndGet() == 200) {
                CompletableFuture<Void> late = new CompletableFuture<>();
                answers.schedule(() -> late.complete(null), 300, TimeUnit.MILLISECONDS);
                return late;
            }
            return CompletableFuture.completedFuture(null);
        };

        LoadResult result = new OpenLoop(2000, Duration.ofSeconds(1), 1, Duration.ofSeconds(5), 2).run(requests);

        assertThat(result.requests()).isEqualTo(2000);
        assertThat(result.failureCount()).isZero();
        // ~600 requests were due during the 300 ms stall (2 per ms), their waits spread from 300 ms down to 0
        long over100ms = result.latencyNs().getCountBetweenValues(TimeUnit.MILLISECONDS.toNanos(100),
                result.latencyNs().getMaxValue());
        assertThat(over100ms).as("requests that waited 100 ms or more").isGreaterThanOrEqualTo(300);
        assertThat(result.percentileMs(90)).isGreaterThanOrEqualTo(50);
        assertThat(result.maxMs()).isGreaterThanOrEqualTo(290);
    }

    @Test
    void withoutStallsLatencyIsTheAnswersTimeAndTheRateIsKept() throws Exception {
        LoadResult result = new OpenLoop(1000, Duration.ofMillis(500), 64, Duration.ofSeconds(5), 2)
                .run(() -> CompletableFuture.completedFuture(null));

        assertThat(result.requests()).isEqualTo(500);
        assertThat(result.percentileMs(50)).isLessThan(50);
        assertThat(result.seconds()).isBetween(0.45, 5.0);
    }

    @Test
    void requestsStillUnansweredAfterTheDrainAreFailuresWithTheirWaitSoFar() throws Exception {
        AtomicLong sent = new AtomicLong();
        Supplier<CompletableFuture<?>> requests = () -> sent.incrementAndGet() % 10 == 0
                ? new CompletableFuture<>() // never answered
                : CompletableFuture.failedFuture(new IllegalStateException("refused"));

        LoadResult result = new OpenLoop(1000, Duration.ofMillis(100), 1000, Duration.ofMillis(200), 3).run(requests);

        assertThat(result.requests()).isEqualTo(100);
        assertThat(result.failures()).containsEntry(OpenLoop.UNANSWERED, 10L).containsEntry("IllegalStateException", 90L);
        assertThat(result.maxMs()).isGreaterThanOrEqualTo(200);
    }

    @Test
    void aClientThatNeverAnswersStopsTheRunAfterTheDrainInsteadOfHoldingItForever() {
        long start = System.nanoTime();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new OpenLoop(1000, Duration.ofSeconds(10), 4,
                        Duration.ofMillis(300), 2).run(CompletableFuture::new))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("4 requests still unanswered");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
    }

    @Test
    void aSenderThatThrowsCountsAFailureAndTheScheduleGoesOn() throws Exception {
        LoadResult result = new OpenLoop(1000, Duration.ofMillis(50), 8, Duration.ofSeconds(1), 2).run(() -> {
            throw new IllegalArgumentException("bad request");
        });

        assertThat(result.requests()).isEqualTo(50);
        assertThat(result.failures()).containsExactly(java.util.Map.entry("IllegalArgumentException", 50L));
    }
}
