package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import static io.kvorum.node.time.HybridLogicalClock.pack;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.time.ManualClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class ExpiryPurgerTest {

    private static final long T0 = 1_700_000_000_000L;
    private static final long GRACE = 10_000;

    @TempDir
    Path dir;

    private StorageService storage;
    private ManualClock clock;

    @BeforeEach
    void open() throws Exception {
        storage = new StorageService(LevelDbStore.open(dir, false, 1 << 20), 1, 1024);
        clock = new ManualClock(T0);
    }

    @AfterEach
    void close() throws Exception {
        storage.close();
    }

    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private void write(String k, Record r) {
        assertThat(storage.write(key(k), r).join()).isTrue();
    }

    private Record read(String k) {
        return storage.read(key(k)).join();
    }

    private ExpiryPurger purger() {
        return new ExpiryPurger(storage, clock, GRACE);
    }

    /**
     * A clock at {@code millis} that runs {@code race} the first time it is read. The purger reads
     * the clock after each scanned batch, before it purges the batch: a racing write lands exactly
     * there.
     */
    private static ManualClock racing(long millis, Runnable race) {
        AtomicBoolean raced = new AtomicBoolean();
        return new ManualClock(millis) {
            @Override
            public long currentTimeMillis() {
                if (raced.compareAndSet(false, true)) {
                    race.run();
                }
                return super.currentTimeMillis();
            }
        };
    }

    @Test
    void anExpiredValueBecomesATombstoneWithTheSameTimestampAndWriter() {
        long ts = pack(T0, 3);
        write("k", Record.value(ts, "n2", key("v"), T0 + 100));
        clock.set(T0 + 100);

        assertThat(purger().runOnce()).isEqualTo(1);

        Record r = read("k");
        assertThat(r.tombstone()).isTrue();
        assertThat(r.timestamp()).isEqualTo(ts);
        assertThat(r.writer()).isEqualTo("n2");
        assertThat(r.expiresAtMillis()).isEqualTo(Record.NEVER_EXPIRES);
        assertThat(r.value()).isEmpty();
    }

    @Test
    void aValueIsNotDeletedByAClockThatMayRunAheadOfItsPeers() {
        long margin = 500;
        AtomicBoolean trusted = new AtomicBoolean(true);
        ExpiryPurger careful = new ExpiryPurger(storage, clock, GRACE, ExpiryPurger.Pacing.DEFAULT, margin, trusted::get,
                ReplicaHoldings.NO_OTHER_REPLICAS);
        write("k", Record.value(pack(T0, 0), "n2", key("v"), T0 + 100));

        clock.set(T0 + 100 + margin - 1);
        assertThat(careful.runOnce()).as("expired here, but maybe not yet on a peer %d ms behind", margin).isZero();
        assertThat(read("k").tombstone()).isFalse();

        clock.set(T0 + 100 + 5_000);
        trusted.set(false); // this node's clock is 5 s ahead of its peers': it refuses writes
        assertThat(careful.runOnce()).as("a node whose clock is off deletes nothing that expired").isZero();
        assertThat(read("k").tombstone()).isFalse();

        trusted.set(true);
        assertThat(careful.runOnce()).isEqualTo(1);
        assertThat(read("k").tombstone()).isTrue();
    }

    @Test
    void liveRecordsAreLeftAlone() {
        Record notYetExpired = Record.value(pack(T0, 0), "n1", key("a"), T0 + 101);
        Record neverExpires = Record.value(pack(T0 - 10 * GRACE, 0), "n1", key("b"), Record.NEVER_EXPIRES);
        Record emptyValue = Record.value(pack(T0 - 10 * GRACE, 0), "n1", new byte[0], Record.NEVER_EXPIRES);
        write("a", notYetExpired);
        write("b", neverExpires);
        write("c", emptyValue);
        clock.set(T0 + 100);

        assertThat(purger().runOnce()).isZero();

        assertThat(read("a")).isEqualTo(notYetExpired);
        assertThat(read("b")).isEqualTo(neverExpires);
        assertThat(read("c")).isEqualTo(emptyValue);
    }

    @Test
    void aTombstoneIsDeletedOnlyOnceTheGraceHasPassed() {
        Record tombstone = Record.tombstone(pack(T0, 5), "n1");
        write("k", tombstone);

        clock.set(T0 + GRACE - 1);
        assertThat(purger().runOnce()).isZero();
        assertThat(read("k")).isEqualTo(tombstone);

        clock.set(T0 + GRACE);
        assertThat(purger().runOnce()).isEqualTo(1);
        assertThat(read("k")).isNull();
    }

    /**
     * Past its grace, a tombstone is dropped only once every other replica of its key is known to
     * hold it: one a replica may lack would come back from it through repair.
     */
    @Test
    void aTombstonePastItsGraceIsKeptUntilEveryReplicaIsKnownToHoldIt() {
        Record tombstone = Record.tombstone(pack(T0, 5), "n1");
        write("k", tombstone);
        write("young", Record.tombstone(pack(T0 + 1, 0), "n1"));
        AtomicBoolean held = new AtomicBoolean(false);
        List<String> asked = new ArrayList<>();
        ExpiryPurger purger = new ExpiryPurger(storage, clock, GRACE, ExpiryPurger.Pacing.DEFAULT, 0, () -> true,
                (k, timestamp) -> {
                    asked.add(new String(k, StandardCharsets.UTF_8) + "@" + timestamp);
                    return held.get();
                });

        clock.set(T0 + GRACE);
        assertThat(purger.runOnce()).as("a replica may lack it").isZero();
        assertThat(read("k")).isEqualTo(tombstone);
        assertThat(purger.tombstonesHeldBack()).isEqualTo(1);
        assertThat(asked).as("only tombstones past their grace are asked about").containsExactly("k@" + pack(T0, 5));

        held.set(true);
        assertThat(purger.runOnce()).isEqualTo(1);
        assertThat(read("k")).isNull();
        assertThat(read("young")).as("still in its grace").isNotNull();
        assertThat(purger.tombstonesHeldBack()).isZero();
        assertThat(purger.tombstonesPurged()).isEqualTo(1);
    }

    @Test
    void anExpiredValueIsDeletedAfterItsTombstoneOutlivedTheGrace() {
        write("k", Record.value(pack(T0, 0), "n1", key("v"), T0 + 1));
        clock.set(T0 + 1);
        assertThat(purger().runOnce()).isEqualTo(1);
        assertThat(read("k").tombstone()).isTrue();

        // The grace counts from the write's timestamp, not from the purge.
        clock.set(T0 + GRACE);
        assertThat(purger().runOnce()).isEqualTo(1);
        assertThat(read("k")).isNull();
    }

    @Test
    void onlyTheRecordsDueAreChangedInAMixedStore() {
        write("expired", Record.value(pack(T0 - 1, 0), "n1", key("x"), T0 - 1));
        write("live", Record.value(pack(T0 - 1, 0), "n1", key("y"), T0 + 1));
        write("old-tombstone", Record.tombstone(pack(T0 - GRACE, 0), "n1"));
        write("young-tombstone", Record.tombstone(pack(T0 - GRACE + 1, 0), "n1"));

        assertThat(purger().runOnce()).isEqualTo(2);

        assertThat(read("expired").tombstone()).isTrue();
        assertThat(read("live").value()).isEqualTo(key("y"));
        assertThat(read("old-tombstone")).isNull();
        assertThat(read("young-tombstone")).isNotNull();
    }

    @Test
    void aScanOfManyBatchesReachesEveryRecord() {
        int n = 700; // more than two scan batches
        for (int i = 0; i < n; i++) {
            write(String.format("k%04d", i), Record.value(pack(T0, 0), "n1", key("v"), T0 + 1));
        }
        clock.set(T0 + 1);
        assertThat(purger().runOnce()).isEqualTo(n);
        for (int i = 0; i < n; i++) {
            assertThat(read(String.format("k%04d", i)).tombstone()).isTrue();
        }
    }

    @Test
    void aRecordOverwrittenAfterTheScanIsNotPurged() {
        Record expired = Record.value(pack(T0, 0), "n1", key("old"), T0 + 1);
        write("k", expired);
        Record rewritten = Record.value(pack(T0 + 5, 0), "n2", key("new"), Record.NEVER_EXPIRES);

        // A client write lands after the scan saw the expired record.
        AtomicReference<Boolean> overwritten = new AtomicReference<>();
        ManualClock racingClock = racing(T0 + 10, () -> overwritten.set(storage.write(key("k"), rewritten).join()));

        int changed = new ExpiryPurger(storage, racingClock, GRACE).runOnce();

        assertThat(overwritten.get()).as("the racing write was stored").isTrue();
        assertThat(changed).isZero();
        assertThat(read("k")).isEqualTo(rewritten);
    }

    @Test
    void aTombstoneOverwrittenAfterTheScanIsNotDeleted() {
        write("k", Record.tombstone(pack(T0, 0), "n1"));
        Record rewritten = Record.value(pack(T0 + GRACE, 0), "n2", key("back"), Record.NEVER_EXPIRES);
        AtomicReference<Boolean> overwritten = new AtomicReference<>();
        ManualClock racingClock = racing(T0 + 2 * GRACE,
                () -> overwritten.set(storage.write(key("k"), rewritten).join()));

        assertThat(new ExpiryPurger(storage, racingClock, GRACE).runOnce()).isZero();

        assertThat(overwritten.get()).isTrue();
        assertThat(read("k")).isEqualTo(rewritten);
    }

    @Test
    void anInterruptedPassStopsWithoutChangingAnything() {
        write("k", Record.value(pack(T0, 0), "n1", key("v"), T0 + 100));
        clock.set(T0 + 100);
        Thread.currentThread().interrupt();
        try {
            assertThat(purger().runOnce()).isZero();
            assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept for the executor").isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(read("k").tombstone()).isFalse();
    }

    @Test
    void aRecordWrittenAheadOfThePassIsPurgedInThatPass() {
        int n = 300; // two scan batches: a fresh cursor for the second one sees what was written meanwhile
        for (int i = 0; i < n; i++) {
            write(String.format("a%04d", i), Record.value(pack(T0, 0), "n1", key("v"), T0 + 1));
        }
        AtomicReference<Boolean> written = new AtomicReference<>();
        Record late = Record.value(pack(T0, 1), "n1", key("v"), T0 + 1);
        ManualClock racingClock = racing(T0 + 10, () -> written.set(storage.write(key("z-late"), late).join()));

        assertThat(new ExpiryPurger(storage, racingClock, GRACE).runOnce()).isEqualTo(n + 1);

        assertThat(written.get()).isTrue();
        assertThat(read("z-late").tombstone()).isTrue();
    }

    // The two pace tests bound a pass's duration from below only: pacing makes it at least that
    // long however fast the machine; nothing here says how fast an unpaced pass is.

    @Test
    void aPassReadsNoMoreRecordsASecondThanItsPace() {
        int n = 600; // batches of 256, 256 and 88: the second and third wait 256 / 400 s each
        for (int i = 0; i < n; i++) {
            write(String.format("k%04d", i), Record.value(pack(T0, 0), "n1", key("v"), T0 + 1));
        }
        clock.set(T0 + 1);
        ExpiryPurger paced = new ExpiryPurger(storage, clock, GRACE, new ExpiryPurger.Pacing(400, 1e12));

        long started = System.nanoTime();
        assertThat(paced.runOnce()).isEqualTo(n);
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(1200));
    }

    @Test
    void aPassReadsNoMoreBytesASecondThanItsPace() {
        int n = 300; // a first batch of 256 records (about 1 MB), then 44 that wait for it at 1 MiB/s
        for (int i = 0; i < n; i++) {
            write(String.format("k%04d", i), Record.value(pack(T0, 0), "n1", new byte[4000], T0 + 1));
        }
        clock.set(T0 + 1);
        ExpiryPurger paced = new ExpiryPurger(storage, clock, GRACE, new ExpiryPurger.Pacing(1e9, 1 << 20));

        long started = System.nanoTime();
        assertThat(paced.runOnce()).isEqualTo(n);
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(900));
    }
}
