package io.kvorum.node.hints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.kvorum.node.hints.HintStore.DropReason;
import io.kvorum.node.hints.HintStore.Hint;
import io.kvorum.node.hints.HintStore.Limits;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.DiskSpace;
import io.kvorum.node.time.ManualClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HintStoreTest {

    static final long T0 = 1_700_000_000_000L;
    private static final Limits ROOMY = new Limits(1L << 30, Duration.ofHours(3), 1024, 64L << 20);
    /** How long a test waits for the writer thread's periodic work (about once a second). */
    private static final Duration WRITER_BOUND = Duration.ofSeconds(15);

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock(T0);
    private final List<HintStore> opened = new ArrayList<>();
    /** What {@link HintStore} logged during the test, formatted. */
    private final List<String> logged = new CopyOnWriteArrayList<>();
    private final AppenderBase<ILoggingEvent> capture = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            logged.add(event.getFormattedMessage());
        }
    };

    @BeforeEach
    void captureLog() {
        capture.start();
        ((Logger) LoggerFactory.getLogger(HintStore.class)).addAppender(capture);
    }

    @AfterEach
    void closeAll() throws InterruptedException {
        ((Logger) LoggerFactory.getLogger(HintStore.class)).detachAppender(capture);
        for (HintStore s : opened) {
            s.close();
        }
    }

    private HintStore open(Limits limits) throws Exception {
        return openIn("hints", limits);
    }

    private HintStore openIn(String subdir, Limits limits) throws Exception {
        HintStore store = HintStore.open(dir.resolve(subdir), false, limits, clock);
        opened.add(store);
        return store;
    }

    static Record value(long timestamp, String value) {
        return Record.value(timestamp, "n1", value.getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES);
    }

    static String keyOf(Hint h) {
        return new String(h.key(), StandardCharsets.UTF_8);
    }

    private static void hintAll(HintStore store, String peer, int count, String prefix) {
        for (int i = 0; i < count; i++) {
            store.hint(peer, (prefix + i).getBytes(StandardCharsets.UTF_8), value(i + 1, "v" + i));
        }
    }

    @Test
    void aPeersHintsReadInArrivalOrderApartFromOtherPeers() throws Exception {
        HintStore store = open(ROOMY);
        for (int i = 0; i < 300; i++) {
            // interleaved, with a peer id that is a prefix of the other: n1 must not see n10's hints
            store.hint("n1", ("a" + i).getBytes(StandardCharsets.UTF_8), value(1000 - i, "v"));
            store.hint("n10", ("b" + i).getBytes(StandardCharsets.UTF_8), value(i + 1, "w"));
        }
        store.flush().get();

        assertThat(store.pendingByPeer()).containsEntry("n1", 300L).containsEntry("n10", 300L).hasSize(2);
        List<Hint> all = new ArrayList<>();
        long after = 0;
        for (List<Hint> page; !(page = store.read("n1", after, 64)).isEmpty(); after = page.get(page.size() - 1).seq()) {
            assertThat(page.size()).isLessThanOrEqualTo(64);
            all.addAll(page);
        }
        assertThat(all).extracting(HintStoreTest::keyOf)
                .containsExactlyElementsOf(java.util.stream.IntStream.range(0, 300).mapToObj(i -> "a" + i).toList());
        assertThat(all).allMatch(h -> h.peer().equals("n1"));
        assertThat(all.get(7).record()).isEqualTo(value(993, "v"));
        assertThat(store.read("n2", 0, 10)).isEmpty();
    }

    @Test
    void aReadEndsOnceItsHintsReachTheByteBoundButReturnsAtLeastOne() throws Exception {
        HintStore store = open(ROOMY);
        for (int i = 0; i < 10; i++) {
            store.hint("n2", ("k" + i).getBytes(StandardCharsets.UTF_8),
                    Record.value(i + 1, "n1", new byte[1000], Record.NEVER_EXPIRES));
        }
        store.flush().get();

        assertThat(store.read("n2", 0, 64, 2500)).extracting(HintStoreTest::keyOf).containsExactly("k0", "k1", "k2");
        assertThat(store.read("n2", 0, 64, 1)).extracting(HintStoreTest::keyOf).containsExactly("k0");
        assertThat(store.read("n2", 7, 64, 1L << 20)).extracting(HintStoreTest::keyOf).containsExactly("k7", "k8", "k9");
    }

    @Test
    void aHintKeepsItsTombstoneExpiryAndCreationTime() throws Exception {
        HintStore store = open(ROOMY);
        Record expiring = Record.value(5, "n3", "temp".getBytes(StandardCharsets.UTF_8), T0 + 60_000);
        Record tombstone = Record.tombstone(6, "n3");
        store.hint("n2", "k1".getBytes(StandardCharsets.UTF_8), expiring);
        clock.advance(1234);
        store.hint("n2", "k2".getBytes(StandardCharsets.UTF_8), tombstone);
        store.flush().get();

        List<Hint> hints = store.read("n2", 0, 10);
        assertThat(hints).hasSize(2);
        assertThat(hints.get(0).record().expiresAtMillis()).isEqualTo(T0 + 60_000);
        assertThat(hints.get(0).record()).isEqualTo(expiring);
        assertThat(hints.get(0).createdAtMillis()).isEqualTo(T0);
        assertThat(hints.get(1).record().tombstone()).isTrue();
        assertThat(hints.get(1).record()).isEqualTo(tombstone);
        assertThat(hints.get(1).createdAtMillis()).isEqualTo(T0 + 1234);
    }

    @Test
    void hintsSurviveAReopenAndNewOnesComeAfterThem() throws Exception {
        HintStore store = open(ROOMY);
        hintAll(store, "n2", 5, "old");
        store.close(); // no flush: close writes what is queued

        HintStore reopened = open(ROOMY);
        assertThat(reopened.pending("n2")).isEqualTo(5);
        long bytes = reopened.pendingBytes("n2");
        assertThat(bytes).isPositive();
        hintAll(reopened, "n2", 2, "new");
        reopened.flush().get();

        assertThat(reopened.read("n2", 0, 100)).extracting(HintStoreTest::keyOf)
                .containsExactly("old0", "old1", "old2", "old3", "old4", "new0", "new1");
        assertThat(reopened.pendingBytes("n2")).isGreaterThan(bytes);
    }

    @Test
    void deleteRemovesExactlyTheGivenHints() throws Exception {
        HintStore store = open(ROOMY);
        hintAll(store, "n2", 4, "k");
        store.flush().get();
        List<Hint> hints = store.read("n2", 0, 10);
        long bytesBefore = store.pendingBytes("n2");

        store.delete(List.of(hints.get(0), hints.get(2))).get();
        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("k1", "k3");
        assertThat(store.pending("n2")).isEqualTo(2);
        assertThat(store.pendingBytes("n2")).isLessThan(bytesBefore).isPositive();

        store.delete(List.of(hints.get(0))).get(); // deleted already: no change, no miscount
        assertThat(store.pending("n2")).isEqualTo(2);

        store.delete(List.of(hints.get(1), hints.get(3))).get();
        assertThat(store.pending("n2")).isZero();
        assertThat(store.pendingBytes("n2")).isZero();
        assertThat(store.pendingByPeer()).isEmpty();
        assertThat(store.dropped()).isZero();
    }

    @Test
    void aPeerAtItsByteBoundDropsNewHintsCountsAndLogsThem() throws Exception {
        HintStore probe = openIn("probe", ROOMY);
        probe.hint("n9", "k0".getBytes(StandardCharsets.UTF_8), value(1, "v0"));
        probe.flush().get();
        long oneHint = probe.pendingBytes("n9"); // every hint below has the same size

        HintStore store = open(new Limits(3 * oneHint, Duration.ofHours(3), 1024, 64L << 20));
        hintAll(store, "n2", 5, "k");
        hintAll(store, "n3", 1, "k");
        store.flush().get();

        assertThat(store.pending("n2")).isEqualTo(3);
        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("k0", "k1", "k2");
        assertThat(store.pending("n3")).as("another peer has its own bound").isEqualTo(1);
        assertThat(store.droppedByReason()).containsEntry(DropReason.PEER_FULL, 2L);
        clock.advance(1_000); // housekeeping, which logs drops, runs once a second of the store's clock
        awaitTrue("a log line about the drop", () -> logged.stream().anyMatch(line ->
                line.matches("dropped \\d+ hint\\(s\\) for n2: .*--hint-max-bytes-per-peer.*anti-entropy.*")));

        store.delete(store.read("n2", 0, 1)).get();
        hintAll(store, "n2", 1, "x"); // the same size as each of the others
        store.flush().get();
        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("k1", "k2", "x0");
    }

    @Test
    void aHintThatCannotFitItsPeersBoundIsDroppedBeforeItIsQueued() throws Exception {
        // A 5,000-byte value against a 1,000-byte peer bound: it is dropped for the peer's bound at
        // once, not queued (had it been offered to the 2,000-byte queue, the queue would refuse it).
        HintStore store = open(new Limits(1000, Duration.ofHours(3), 1024, 2000));
        store.hint("n2", "big".getBytes(StandardCharsets.UTF_8),
                Record.value(1, "n1", new byte[5000], Record.NEVER_EXPIRES));
        store.flush().get();

        assertThat(store.droppedByReason()).containsEntry(DropReason.PEER_FULL, 1L)
                .containsEntry(DropReason.QUEUE_FULL, 0L);
        assertThat(store.pending("n2")).isZero();
    }

    @Test
    void hintsOlderThanTheAgeBoundAreDroppedAndCounted() throws Exception {
        HintStore store = open(new Limits(1L << 30, Duration.ofSeconds(10), 1024, 64L << 20));
        hintAll(store, "n2", 70, "old"); // more than one page of the expiry sweep
        store.flush().get();
        clock.advance(6_000);
        hintAll(store, "n2", 2, "young");
        store.flush().get();
        clock.advance(6_000); // the old ones are 12 s old, the young ones 6 s

        awaitTrue("the old hints to expire", () -> store.pending("n2") == 2);
        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("young0", "young1");
        assertThat(store.droppedByReason()).containsEntry(DropReason.EXPIRED, 70L);
        awaitTrue("a log line about the drop", () -> logged.stream().anyMatch(line ->
                line.matches("dropped 70 hint\\(s\\) for n2: .*--hint-max-age.*")));
    }

    @Test
    void aHintThatDoesNotFitTheQueueIsDroppedAtOnce() throws Exception {
        HintStore store = open(new Limits(1L << 30, Duration.ofHours(3), 1024, 1024));
        store.hint("n2", "big".getBytes(StandardCharsets.UTF_8),
                Record.value(1, "n1", new byte[4096], Record.NEVER_EXPIRES));
        store.hint("n2", "small".getBytes(StandardCharsets.UTF_8), value(2, "v"));
        store.flush().get();
        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("small");
        assertThat(store.droppedByReason()).containsEntry(DropReason.QUEUE_FULL, 1L);
    }

    @Test
    void aHintThatWouldGoUnderTheDisksReserveIsDropped() throws Exception {
        AtomicLong free = new AtomicLong(10_000);
        DiskSpace disk = new DiskSpace(free::get, 9_000);
        HintStore store = open(new Limits(1L << 30, Duration.ofHours(3), 1024, 64L << 20, disk));
        store.hint("n2", "fits".getBytes(StandardCharsets.UTF_8), value(1, "v"));
        store.hint("n2", "big".getBytes(StandardCharsets.UTF_8),
                Record.value(2, "n1", new byte[4096], Record.NEVER_EXPIRES));
        store.flush().get();
        assertThat(store.read("n2", 0, 10)).extracting(HintStoreTest::keyOf).containsExactly("fits");
        assertThat(store.droppedByReason()).containsEntry(DropReason.LOW_DISK, 1L);
    }

    @Test
    void aClosedStoreDropsHintsAndRefusesReads() throws Exception {
        HintStore store = open(ROOMY);
        store.close();
        store.hint("n2", "late".getBytes(StandardCharsets.UTF_8), value(1, "v"));
        assertThat(store.droppedByReason()).containsEntry(DropReason.SHUTTING_DOWN, 1L);
        assertThatThrownBy(() -> store.read("n2", 0, 1)).isInstanceOf(IllegalStateException.class);
        assertThat(store.delete(List.of(new Hint("n2", 1, new byte[1], value(1, "v"), T0))))
                .isCompletedExceptionally();
    }


    /** Polls {@code condition} until it holds, failing the test after {@link #WRITER_BOUND}. */
    static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        try {
            await(what).atMost(WRITER_BOUND).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20))
                    .pollInSameThread().until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("timed out after " + WRITER_BOUND + " waiting for " + what, e);
        }
    }
}
