package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvorum.node.storage.BatchingWriter.Offer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class BatchingWriterTest {

    private final List<List<Integer>> committed = new CopyOnWriteArrayList<>();
    private final List<Integer> abandoned = new CopyOnWriteArrayList<>();
    private final AtomicInteger ticks = new AtomicInteger();
    private final AtomicInteger stops = new AtomicInteger();
    /** Held by the first commit until released, so that items pile up behind it. */
    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch firstCommitRunning = new CountDownLatch(1);
    private BatchingWriter<Integer> writer;

    private BatchingWriter<Integer> start(int capacity, int maxBatch, boolean holdFirstCommit) {
        writer = new BatchingWriter<>(task -> new Thread(task, "test-writer"), capacity, maxBatch,
                new BatchingWriter.Handler<>() {
                    @Override
                    public void commit(List<Integer> batch) {
                        committed.add(List.copyOf(batch));
                        firstCommitRunning.countDown();
                        if (holdFirstCommit) {
                            awaitRelease();
                        }
                    }

                    @Override
                    public void abandon(Integer item) {
                        abandoned.add(item);
                    }

                    @Override
                    public void tick() {
                        ticks.incrementAndGet();
                    }

                    @Override
                    public void stopped() {
                        stops.incrementAndGet();
                    }
                });
        writer.start();
        return writer;
    }

    private void awaitRelease() {
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @AfterEach
    void stop() throws InterruptedException {
        release.countDown();
        if (writer != null) {
            writer.stop(Duration.ofSeconds(10));
        }
    }

    @Test
    void queuedItemsAreCommittedInBatchesInOrder() throws Exception {
        start(100, 4, true);
        assertThat(writer.offer(0)).isEqualTo(Offer.QUEUED);
        assertThat(firstCommitRunning.await(10, TimeUnit.SECONDS)).isTrue();
        for (int i = 1; i <= 9; i++) {
            assertThat(writer.offer(i)).isEqualTo(Offer.QUEUED);
        }
        release.countDown();

        await().atMost(Duration.ofSeconds(10)).until(() -> committed.stream().mapToInt(List::size).sum() == 10);
        assertThat(committed).containsExactly(List.of(0), List.of(1, 2, 3, 4), List.of(5, 6, 7, 8), List.of(9));
    }

    @Test
    void aFullQueueRefusesAtOnce() throws Exception {
        start(2, 4, true);
        writer.offer(0);
        assertThat(firstCommitRunning.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(writer.offer(1)).isEqualTo(Offer.QUEUED);
        assertThat(writer.offer(2)).isEqualTo(Offer.QUEUED);
        assertThat(writer.offer(3)).isEqualTo(Offer.FULL);
        release.countDown();

        await().atMost(Duration.ofSeconds(10)).until(() -> committed.size() == 2);
        assertThat(committed).containsExactly(List.of(0), List.of(1, 2));
    }

    @Test
    void stopCommitsWhatIsQueuedThenRefuses() throws Exception {
        start(100, 4, true);
        writer.offer(0);
        assertThat(firstCommitRunning.await(10, TimeUnit.SECONDS)).isTrue();
        writer.offer(1);
        writer.offer(2);
        release.countDown();

        assertThat(writer.stop(Duration.ofSeconds(10))).isTrue();
        assertThat(committed).containsExactly(List.of(0), List.of(1, 2));
        assertThat(abandoned).isEmpty();
        assertThat(stops).hasValue(1);
        assertThat(writer.isStopping()).isTrue();
        assertThat(writer.offer(3)).isEqualTo(Offer.STOPPING);
    }

    @Test
    void anIdleWriterTicks() {
        start(10, 4, false);
        await().atMost(Duration.ofSeconds(10)).until(() -> ticks.get() >= 2);
        assertThat(committed).isEmpty();
    }

    @Test
    void aFailingCommitDoesNotStopTheWriter() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        writer = new BatchingWriter<>(task -> new Thread(task, "test-writer"), 10, 4, new BatchingWriter.Handler<>() {
            @Override
            public void commit(List<Integer> batch) {
                if (calls.incrementAndGet() == 1) {
                    throw new IllegalStateException("disk on fire");
                }
                committed.add(List.copyOf(batch));
            }

            @Override
            public void abandon(Integer item) {
                abandoned.add(item);
            }
        });
        writer.start();
        writer.offer(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> calls.get() == 1);
        writer.offer(1);

        await().atMost(Duration.ofSeconds(10)).until(() -> committed.equals(List.of(List.of(1))));
    }
}
