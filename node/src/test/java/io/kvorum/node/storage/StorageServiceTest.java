package io.kvorum.node.storage;

import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.model.Record;
import io.kvorum.testkit.Await;
import io.micrometer.core.instrument.Counter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class StorageServiceTest {

    @TempDir
    Path dir;

    private StorageService storage;
    /** Released in {@link #close()} so that a failing test never leaves a storage thread blocked. */
    private final CountDownLatch release = new CountDownLatch(1);

    private StorageService open(int readers, int queueCapacity) throws Exception {
        return open(readers, queueCapacity, false);
    }

    /** With {@code fsync}, every write goes through the writer thread's queue, never inline. */
    private StorageService open(int readers, int queueCapacity, boolean fsync) throws Exception {
        storage = new StorageService(LevelDbStore.open(dir, fsync, 1 << 20), readers, queueCapacity);
        return storage;
    }

    @AfterEach
    void close() throws Exception {
        release.countDown();
        if (storage != null) {
            storage.close();
        }
    }

    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Record value(long ts, String v) {
        return Record.value(ts, "n1", key(v), Record.NEVER_EXPIRES);
    }

    private static Throwable failureOf(CompletableFuture<?> f) {
        assertThat(f).isCompletedExceptionally();
        try {
            f.get();
            throw new AssertionError("not failed");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private void awaitRelease() {
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Occupies the only reader thread until {@link #release}; returns once it is occupied. */
    private void blockTheReader() throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        storage.readExecutor().execute(() -> {
            running.countDown();
            awaitRelease();
        });
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * Occupies the writer thread until {@link #release}: a write's future completes on the writer
     * thread (the store must fsync, or idle writes commit on the caller's thread), so a
     * continuation attached before that completion runs there and can wait. When the write had
     * already completed, the continuation runs here instead and we try again.
     */
    private void blockTheWriter() throws InterruptedException {
        CountDownLatch blocked = new CountDownLatch(1);
        for (int attempt = 0; attempt < 1000; attempt++) {
            AtomicBoolean ranHere = new AtomicBoolean();
            Thread caller = Thread.currentThread();
            storage.write(key("blocker"), value(attempt + 1, "b")).thenRun(() -> {
                if (Thread.currentThread() == caller) {
                    ranHere.set(true);
                } else {
                    blocked.countDown();
                    awaitRelease();
                }
            });
            if (!ranHere.get()) {
                assertThat(blocked.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(storage.read(key("blocker")).join()).isNotNull(); // the blocker is written
                return;
            }
        }
        throw new AssertionError("could not catch the writer thread in 1000 attempts");
    }

    @Test
    void writeThenReadReturnsTheRecord() throws Exception {
        open(2, 16);
        Record r = value(10, "v");
        assertThat(storage.write(key("k"), r).get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(storage.read(key("k")).get(10, TimeUnit.SECONDS)).isEqualTo(r);
        assertThat(storage.read(key("missing")).get(10, TimeUnit.SECONDS)).isNull();
    }

    @Test
    void anOlderWriteIsNotStored() throws Exception {
        open(2, 16);
        assertThat(storage.write(key("k"), value(10, "new")).join()).isTrue();
        assertThat(storage.write(key("k"), value(5, "old")).join()).isFalse();
        assertThat(storage.read(key("k")).join().value()).isEqualTo(key("new"));
    }

    @Test
    void concurrentWritesAllCompleteAndTheNewestWins() throws Exception {
        open(2, 4096);
        List<CompletableFuture<Boolean>> writes = new ArrayList<>();
        for (int i = 1; i <= 1000; i++) {
            writes.add(storage.write(key("k" + (i % 10)), value(i, "v" + i)));
        }
        CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
        // Writes to one key are submitted in ascending timestamp order from one thread: each is newer.
        assertThat(writes).allMatch(CompletableFuture::join);
        for (int k = 0; k < 10; k++) {
            long newest = 990 + (k == 0 ? 10 : k);
            assertThat(storage.read(key("k" + k)).join().timestamp()).isEqualTo(newest);
        }
    }

    @Test
    void aFullReadQueueRefusesReadsAtOnce() throws Exception {
        open(1, 1);
        storage.write(key("k"), value(1, "v")).join();
        blockTheReader();

        // state: the reader is busy, the queue (capacity 1) is empty
        CompletableFuture<Record> queued = storage.read(key("k"));
        assertThat(queued).isNotDone();

        // state: the queue is full
        CompletableFuture<Record> refused = storage.read(key("k"));
        assertThat(failureOf(refused)).isInstanceOf(StorageOverloadedException.class);
        assertThatThrownBy(() -> storage.readExecutor().execute(() -> { }))
                .isInstanceOf(RejectedExecutionException.class);

        release.countDown();
        assertThat(queued.get(10, TimeUnit.SECONDS).value()).isEqualTo(key("v"));
        // state: drained, reads are served again
        assertThat(storage.read(key("k")).get(10, TimeUnit.SECONDS)).isNotNull();
    }

    @Test
    void aFullWriteQueueRefusesWritesAtOnceAndWithoutEffect() throws Exception {
        open(1, 1, true);
        blockTheWriter();

        // state: the writer is busy, the write queue (capacity 1) is empty
        CompletableFuture<Boolean> queued = storage.write(key("queued"), value(1, "q"));
        assertThat(queued).isNotDone();

        // state: the write queue is full
        CompletableFuture<Boolean> refused = storage.write(key("refused"), value(1, "r"));
        assertThat(failureOf(refused)).isInstanceOf(StorageOverloadedException.class);
        CompletableFuture<Boolean> refusedPurge = storage.purge(key("queued"), value(1, "q"), null);
        assertThat(failureOf(refusedPurge)).isInstanceOf(StorageOverloadedException.class);
        assertThat(storage.read(key("queued")).join()).as("not written yet").isNull();

        release.countDown();
        assertThat(queued.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(storage.read(key("queued")).join().value()).isEqualTo(key("q"));
        assertThat(storage.read(key("refused")).join()).as("the refused write had no effect").isNull();
        // state: drained, writes are taken again
        assertThat(storage.write(key("refused"), value(1, "r")).get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void withoutFsyncAWriteToAnIdleStoreCommitsOnTheCallersThread() throws Exception {
        // (With fsync every write goes through the writer thread: blockTheWriter relies on it.)
        open(1, 16);
        CompletableFuture<Boolean> write = storage.write(key("k"), value(1, "v"));

        assertThat(write).as("committed before write returned, so without a hand-off").isCompletedWithValue(true);
        assertThat(storage.read(key("k")).join().value()).isEqualTo(key("v"));
    }

    @Test
    void readsAndWritesThatFindTheirStorageThreadsIdleRunOnTheCallersThreadAndAreCounted() throws Exception {
        NodeMetrics metrics = NodeMetrics.unregistered();
        storage = new StorageService(LevelDbStore.open(dir, false, 1 << 20), 1, 16, metrics);

        assertThat(storage.write(key("k"), value(1, "v"))).isCompletedWithValue(true);
        CompletableFuture<Record> read = storage.read(key("k"));

        assertThat(read).as("read before read returned, so without a hand-off").isDone();
        assertThat(read.join().value()).isEqualTo(key("v"));
        assertThat(metrics.storageInline(NodeMetrics.StorageQueue.READ).count()).isEqualTo(1.0);
        assertThat(metrics.storageInline(NodeMetrics.StorageQueue.WRITE).count()).isEqualTo(1.0);
    }

    @Test
    void whileAReaderHasWorkReadsQueueForTheReaders() throws Exception {
        NodeMetrics metrics = NodeMetrics.unregistered();
        storage = new StorageService(LevelDbStore.open(dir, false, 1 << 20), 1, 16, metrics);
        storage.write(key("k"), value(1, "v")).join();
        blockTheReader(); // as a range cursor's batch would

        CompletableFuture<Record> queued = storage.read(key("k"));
        assertThat(queued).isNotDone();

        release.countDown();
        assertThat(queued.get(10, TimeUnit.SECONDS).value()).isEqualTo(key("v"));
        assertThat(metrics.storageInline(NodeMetrics.StorageQueue.READ).count()).isZero();
    }

    @Test
    void aSlowReadOnTheCallersThreadSendsTheNextSecondsReadsToTheReaders() throws Exception {
        AtomicLong step = new AtomicLong();
        NodeMetrics metrics = NodeMetrics.unregistered();
        storage = new StorageService(LevelDbStore.open(dir, false, 1 << 20), 1, 16, DiskSpace.UNCHECKED, metrics,
                Duration.ofSeconds(1), () -> nanos.addAndGet(step.get()));
        storage.write(key("k"), value(1, "v")).join();
        Counter inlineReads = metrics.storageInline(NodeMetrics.StorageQueue.READ);

        // Each reading of the clock moves it 600 µs on: the read takes 600 µs, over the 0.5 ms allowed.
        step.set(TimeUnit.MICROSECONDS.toNanos(600));
        assertThat(storage.read(key("k")).join().value()).isEqualTo(key("v"));
        assertThat(inlineReads.count()).isEqualTo(1.0);

        step.set(0);
        advanceMillis(999);
        // state: 999 ms after the slow read ended, reads still go to the reader
        assertThat(storage.read(key("k")).get(10, TimeUnit.SECONDS).value()).isEqualTo(key("v"));
        assertThat(inlineReads.count()).isEqualTo(1.0);

        advanceMillis(1);
        // state: a second after it, reads run on the caller's thread again, once the reader has
        // counted its read as finished (just after it completed that read's future)
        Await.until("a read on the caller's thread", Duration.ofSeconds(10), () -> {
            if (inlineReads.count() < 2.0) {
                assertThat(storage.read(key("k")).orTimeout(10, TimeUnit.SECONDS).join().value()).isEqualTo(key("v"));
            }
            return inlineReads.count() >= 2.0;
        });
        assertThat(inlineReads.count()).isEqualTo(2.0);
    }

    @Test
    void purgeGoesThroughTheWriter() throws Exception {
        open(1, 16);
        Record tombstone = Record.tombstone(5, "n1");
        storage.write(key("k"), tombstone).join();
        assertThat(storage.purge(key("k"), value(5, "other"), null).join()).isFalse();
        assertThat(storage.read(key("k")).join()).isEqualTo(tombstone);
        assertThat(storage.purge(key("k"), tombstone, null).join()).isTrue();
        assertThat(storage.read(key("k")).join()).isNull();
    }

    @Test
    void closeFinishesQueuedWritesAndThenRefusesNewOnes() throws Exception {
        open(1, 64);
        List<CompletableFuture<Boolean>> writes = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            writes.add(storage.write(key("k" + i), value(1, "v")));
        }
        storage.close();
        assertThat(writes).allSatisfy(w -> assertThat(w).isCompletedWithValue(true));
        CompletableFuture<Boolean> late = storage.write(key("late"), value(1, "v"));
        assertThat(failureOf(late)).isInstanceOf(StorageOverloadedException.class);
        storage = null;

        try (LevelDbStore reopened = LevelDbStore.open(dir, false, 1 << 20)) {
            assertThat(reopened.get(key("k49"))).isNotNull();
            assertThat(reopened.get(key("late"))).isNull();
        }
    }

    @Test
    void storageThreadsAreNamed() throws Exception {
        open(1, 16);
        CompletableFuture<String> readerName = new CompletableFuture<>();
        storage.readExecutor().execute(() -> readerName.complete(Thread.currentThread().getName()));
        assertThat(readerName.get(10, TimeUnit.SECONDS)).startsWith("storage-reader");
    }

    @Test
    void atTheDisksReserveWritesAreRefusedWithoutEffectAndReadsAndPurgesGoOn() throws Exception {
        AtomicLong free = new AtomicLong(1L << 30);
        DiskSpace disk = new DiskSpace(free::get, 1L << 20);
        storage = new StorageService(LevelDbStore.open(dir, false, 1 << 20), 1, 16, disk,
                NodeMetrics.unregistered());
        Record kept = value(1, "kept");
        assertThat(storage.write(key("a"), kept).get(5, TimeUnit.SECONDS)).isTrue();

        free.set((1L << 20) - 1);
        disk.check();
        Throwable refused = failureOf(storage.write(key("b"), value(2, "refused")));
        assertThat(refused).isInstanceOf(StorageOverloadedException.class)
                .hasMessageContaining("--min-free-disk 1048576").hasMessageContaining("bytes free");
        assertThat(storage.read(key("b")).get(5, TimeUnit.SECONDS)).as("the refused write had no effect").isNull();
        assertThat(storage.read(key("a")).get(5, TimeUnit.SECONDS)).isEqualTo(kept);
        assertThat(storage.purge(key("a"), kept, null).get(5, TimeUnit.SECONDS)).as("purges give space back").isTrue();

        free.set(1L << 30);
        disk.check();
        assertThat(storage.write(key("b"), value(3, "later")).get(5, TimeUnit.SECONDS)).isTrue();
    }

    /** What {@link #openTimed} times reads and writes with. */
    private final AtomicLong nanos = new AtomicLong();

    /**
     * A store holding {@code k -> v}, with one reader, whose reads and writes are timed by
     * {@link #nanos} against a budget of one second. With {@code fsync}, every write goes through
     * the writer thread's queue.
     */
    private NodeMetrics openTimed(boolean fsync) throws Exception {
        NodeMetrics metrics = NodeMetrics.unregistered();
        storage = new StorageService(LevelDbStore.open(dir, fsync, 1 << 20), 1, 16, DiskSpace.UNCHECKED, metrics,
                Duration.ofSeconds(1), nanos::get);
        storage.write(key("k"), value(1, "v")).join();
        return metrics;
    }

    private void advanceMillis(long millis) {
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    @Test
    void aReadThatWaitedForAReaderPastTheBudgetIsDroppedUnread() throws Exception {
        NodeMetrics metrics = openTimed(false);
        blockTheReader();
        CompletableFuture<Record> late = storage.read(key("k"));
        advanceMillis(400);
        CompletableFuture<Record> onTime = storage.read(key("k"));
        advanceMillis(601);
        // state: the first read has waited 1001 ms, the second 601 ms
        release.countDown();

        assertThat(onTime.get(10, TimeUnit.SECONDS).value()).isEqualTo(key("v"));
        assertThat(failureOf(late)).isInstanceOf(StorageExpiredException.class)
                .hasMessage("the read waited 1001 ms for a storage reader, past the request timeout; dropped unread");
        assertThat(metrics.storageExpired(NodeMetrics.StorageQueue.READ).count()).isEqualTo(1.0);
        assertThat(metrics.storageRejected().count()).isZero();
    }

    @Test
    void whileTheOldestQueuedReadHasWaitedOverHalfTheBudgetNewReadsAreRefused() throws Exception {
        NodeMetrics metrics = openTimed(false);
        blockTheReader();
        CompletableFuture<Record> oldest = storage.read(key("k"));
        advanceMillis(500);
        CompletableFuture<Record> atHalf = storage.read(key("k"));
        assertThat(atHalf).as("queued: the oldest waited exactly half").isNotDone();

        advanceMillis(1);
        assertThat(failureOf(storage.read(key("k")))).isInstanceOf(StorageOverloadedException.class)
                .hasMessage("storage reads are waiting 501 ms, over half of --request-timeout 1000 ms");
        assertThat(metrics.storageRejected().count()).isEqualTo(1.0);

        release.countDown();
        assertThat(oldest.get(10, TimeUnit.SECONDS).value()).isEqualTo(key("v"));
        assertThat(atHalf.get(10, TimeUnit.SECONDS).value()).isEqualTo(key("v"));
        // state: the queue is empty, so nothing has waited: reads are taken again
        assertThat(storage.read(key("k")).get(10, TimeUnit.SECONDS).value()).isEqualTo(key("v"));
        assertThat(metrics.storageExpired(NodeMetrics.StorageQueue.READ).count()).isZero();
    }

    @Test
    void aWriteThatWaitedForTheWriterPastTheBudgetIsDroppedWithoutEffect() throws Exception {
        NodeMetrics metrics = openTimed(true);
        blockTheWriter();
        CompletableFuture<Boolean> late = storage.write(key("late"), value(2, "late"));
        advanceMillis(400);
        CompletableFuture<Boolean> onTime = storage.write(key("on-time"), value(3, "on-time"));
        CompletableFuture<Boolean> purge = storage.purge(key("k"), value(1, "v"), null);
        advanceMillis(601);
        // state: the first write has waited 1001 ms, the second and the purge 601 ms
        release.countDown();

        assertThat(onTime.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(failureOf(late)).isInstanceOf(StorageExpiredException.class).hasMessage(
                "the write waited 1001 ms for the storage writer, past the request timeout; dropped without effect");
        assertThat(storage.read(key("late")).get(10, TimeUnit.SECONDS)).as("the expired write").isNull();
        assertThat(storage.read(key("on-time")).get(10, TimeUnit.SECONDS).value()).isEqualTo(key("on-time"));
        assertThat(purge.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(metrics.storageExpired(NodeMetrics.StorageQueue.WRITE).count()).isEqualTo(1.0);
    }

    @Test
    void whileTheOldestQueuedWriteHasWaitedOverHalfTheBudgetNewWritesAreRefusedButNotPurges() throws Exception {
        NodeMetrics metrics = openTimed(true);
        blockTheWriter();
        CompletableFuture<Boolean> oldest = storage.write(key("a"), value(2, "a"));
        advanceMillis(501);

        assertThat(failureOf(storage.write(key("b"), value(3, "b")))).isInstanceOf(StorageOverloadedException.class)
                .hasMessage("storage writes are waiting 501 ms, over half of --request-timeout 1000 ms");
        CompletableFuture<Boolean> purge = storage.purge(key("k"), value(1, "v"), null);
        assertThat(metrics.storageRejected().count()).isEqualTo(1.0);

        release.countDown();
        assertThat(oldest.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(purge.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(storage.read(key("b")).get(10, TimeUnit.SECONDS)).as("the refused write").isNull();
        // state: nothing waits: writes are taken again
        assertThat(storage.write(key("b"), value(4, "b")).get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aWriteIssuedAsTheOldestIsAnsweredIsNotRefusedForTheAgeOfTheAnsweredOne() throws Exception {
        openTimed(true);
        blockTheWriter();
        CompletableFuture<Boolean> oldest = storage.write(key("a"), value(2, "a"));
        // Runs on the writer thread, inside the answer to the oldest write: the moment a caller
        // woken by that answer could write next, at the latest.
        CompletableFuture<Boolean> next = oldest.thenCompose(stored -> storage.write(key("b"), value(3, "b")));
        advanceMillis(501);

        release.countDown();
        assertThat(oldest.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(next.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aDrainedBatchOfLargeValuesCommitsInPartsAndWhatExpiresMeanwhileIsDropped() throws Exception {
        // The writer's clock moves 600 ms each time it looks, once the writes below are queued.
        AtomicBoolean writerClockMoves = new AtomicBoolean();
        NodeMetrics metrics = NodeMetrics.unregistered();
        storage = new StorageService(LevelDbStore.open(dir, true, 1 << 20), 1, 16, DiskSpace.UNCHECKED, metrics,
                Duration.ofSeconds(1), () -> writerClockMoves.get() && Thread.currentThread().getName().startsWith("storage-writer")
                        ? nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(600)) : nanos.get());
        blockTheWriter();
        byte[] large = new byte[3 << 20];
        List<CompletableFuture<Boolean>> writes = new ArrayList<>();
        for (String k : List.of("a", "b", "c")) {
            writes.add(storage.write(key(k), Record.value(2, "n1", large, Record.NEVER_EXPIRES)));
        }
        writerClockMoves.set(true);
        release.countDown();

        // state: one drained batch; its first part commits after 600 ms, the next ones would after 1200 and 1800
        assertThat(writes.get(0).get(10, TimeUnit.SECONDS)).isTrue();
        for (CompletableFuture<Boolean> expired : writes.subList(1, 3)) {
            assertThat(expired).failsWithin(10, TimeUnit.SECONDS).withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(StorageExpiredException.class);
        }
        writerClockMoves.set(false);
        assertThat(storage.read(key("b")).get(10, TimeUnit.SECONDS)).isNull();
        assertThat(metrics.storageExpired(NodeMetrics.StorageQueue.WRITE).count()).isEqualTo(2.0);
    }
}
