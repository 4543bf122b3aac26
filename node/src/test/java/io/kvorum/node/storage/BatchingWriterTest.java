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
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class BatchingWriterTest {

    private final List<List<Integer>> committed = new CopyOnWriteArrayList<>();
    private final List<String> committingThreads = new CopyOnWriteArrayList<>();
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
                        committingThreads.add(Thread.currentThread().getName());
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
        AtomicInteger calls = startWithFirstCommit(() -> {
            throw new IllegalStateException("disk on fire");
        });
        writer.offer(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> calls.get() == 1);
        writer.offer(1);

        await().atMost(Duration.ofSeconds(10)).until(() -> committed.equals(List.of(List.of(1))));
    }

    @Test
    void anIdleWriterLetsTheOfferingThreadCommit() {
        start(10, 4, false);
        assertThat(writer.offerOrCommit(0)).isEqualTo(Offer.COMMITTED);
        assertThat(writer.offerOrCommit(1)).isEqualTo(Offer.COMMITTED);

        assertThat(committed).containsExactly(List.of(0), List.of(1));
        assertThat(committingThreads).containsOnly(Thread.currentThread().getName());
    }

    @Test
    void whileTheWriterCommitsOffersQueueBehindInOrder() throws Exception {
        start(10, 4, true);
        assertThat(writer.offer(0)).isEqualTo(Offer.QUEUED);
        assertThat(firstCommitRunning.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(writer.offerOrCommit(1)).isEqualTo(Offer.QUEUED);
        assertThat(writer.offerOrCommit(2)).isEqualTo(Offer.QUEUED);
        release.countDown();

        await().atMost(Duration.ofSeconds(10)).until(() -> committed.size() == 2);
        assertThat(committed).containsExactly(List.of(0), List.of(1, 2));
        assertThat(committingThreads).containsOnly("test-writer");
        assertThat(writer.offerOrCommit(3)).as("once the writer is idle again").isEqualTo(Offer.COMMITTED);
    }

    @Test
    void anItemQueuedBehindAnotherThreadsCommitIsNotOvertaken() throws Exception {
        start(10, 4, true);
        Thread inline = new Thread(() -> writer.offerOrCommit(0), "inline");
        inline.start();
        assertThat(firstCommitRunning.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(writer.offer(1)).isEqualTo(Offer.QUEUED);
        // The writer takes 1 from the queue and waits for the inline commit to end: the queue is
        // empty, yet 1 is not committed, so 2 must not go ahead of it.
        await().atMost(Duration.ofSeconds(10)).until(() -> writer.queued() == 0);
        assertThat(writer.offerOrCommit(2)).isEqualTo(Offer.QUEUED);
        release.countDown();
        inline.join(10_000);

        await().atMost(Duration.ofSeconds(10)).until(() -> committed.stream().mapToInt(List::size).sum() == 3);
        assertThat(committed.stream().flatMap(List::stream).toList()).containsExactly(0, 1, 2);
        assertThat(committingThreads.get(0)).isEqualTo("inline");
    }

    @Test
    void theWriterEndsOnlyAfterAnInlineCommitInProgress() throws Exception {
        start(10, 4, true);
        Thread inline = new Thread(() -> writer.offerOrCommit(0), "inline");
        inline.start();
        assertThat(firstCommitRunning.await(10, TimeUnit.SECONDS)).isTrue();

        // The caller closes the database once stop returns true: not while a commit runs.
        assertThat(writer.stop(Duration.ofMillis(300))).as("stopped while the inline commit runs").isFalse();
        release.countDown();
        assertThat(writer.stop(Duration.ofSeconds(10))).isTrue();
        inline.join(10_000);
        assertThat(committed).containsExactly(List.of(0));
    }

    @Test
    void aStoppingWriterRefusesToCommitInline() throws Exception {
        start(10, 4, false);
        assertThat(writer.stop(Duration.ofSeconds(10))).isTrue();
        assertThat(writer.offerOrCommit(0)).isEqualTo(Offer.STOPPING);
        assertThat(committed).isEmpty();
    }

    @Test
    void aFailingInlineCommitLeavesTheNextOneInline() {
        startWithFirstCommit(() -> {
            throw new IllegalStateException("disk on fire");
        });
        assertThat(writer.offerOrCommit(0)).isEqualTo(Offer.COMMITTED);

        // Logging the failure may have made that commit slow enough to pause inline commits for a
        // second; after that they run inline again: the failed item no longer counts as uncommitted.
        AtomicInteger next = new AtomicInteger(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> writer.offerOrCommit(next.getAndIncrement()) == Offer.COMMITTED);
        assertThat(committed.get(0)).containsExactly(1);
    }

    @Test
    void aSlowInlineCommitLeavesTheNextItemsToTheWriterThread() {
        startWithFirstCommit(() -> stall(TimeUnit.MILLISECONDS.toNanos(5))); // a stalled database
        assertThat(writer.offerOrCommit(0)).isEqualTo(Offer.COMMITTED);
        assertThat(writer.offerOrCommit(1)).as("right after a slow inline commit").isEqualTo(Offer.QUEUED);

        await().atMost(Duration.ofSeconds(10)).until(() -> committed.size() == 2);
        assertThat(committingThreads).containsExactly(Thread.currentThread().getName(), "test-writer");
    }

    /**
     * Holds this thread for at least {@code nanos}. One {@code parkNanos} is not enough: it returns
     * at once when the thread holds a permit an earlier {@code unpark} left it (another test's).
     */
    private static void stall(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    /**
     * Starts a writer whose first commit runs {@code first} before it records its batch (or
     * instead, if {@code first} throws); later commits only record. Returns the count of commits.
     */
    private AtomicInteger startWithFirstCommit(Runnable first) {
        AtomicInteger calls = new AtomicInteger();
        writer = new BatchingWriter<>(task -> new Thread(task, "test-writer"), 10, 4, new BatchingWriter.Handler<>() {
            @Override
            public void commit(List<Integer> batch) {
                if (calls.incrementAndGet() == 1) {
                    first.run();
                }
                committed.add(List.copyOf(batch));
                committingThreads.add(Thread.currentThread().getName());
            }

            @Override
            public void abandon(Integer item) {
                abandoned.add(item);
            }
        });
        writer.start();
        return calls;
    }
}
