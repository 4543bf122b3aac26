package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import io.kvorum.node.model.Entry;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.util.Pace;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reclaims space in the background, never on the request path. One {@link #runOnce()} scans the
 * whole store and:
 * <ul>
 *   <li>turns each expired value into a tombstone with the same timestamp and writer. It does not
 *       delete it outright: a replica still holding an older, non-expiring version of the key
 *       would otherwise win it back during repair. The tombstone outranks the expired value under
 *       {@link Record#compareVersions}, so replicas agree on it.</li>
 *   <li>deletes a tombstone once its timestamp is older than the grace period <em>and</em> every
 *       other replica of its key is known to hold it ({@link ReplicaHoldings}: a completed
 *       anti-entropy round with each since the delete). The grace alone is not enough: a replica
 *       down for longer would bring the deleted value back through repair
 *       (docs/operations.md#tombstones-and-repair). A tombstone past its grace that is still held
 *       back counts in {@link #tombstonesHeldBack()}.</li>
 * </ul>
 * Each change goes through the writer as a {@link Mutation.Purge}, which acts only if
 * the record is still the one the scan saw, so a concurrent write is never lost.
 *
 * <p>Pacing: a pass reads at most {@link Pacing#recordsPerSecond} records and
 * {@link Pacing#bytesPerSecond} bytes a second, so that it never takes a core from client
 * requests. (Unpaced, a pass over 100,000 records ran on every node of a cluster at once, and took
 * a 3-node PUT p99 at 10,000/s from 8 ms to 10-89 ms.) It reads in batches of {@value #SCAN_BATCH}
 * records, each through a fresh storage cursor that starts after the last key seen: a pass that
 * lasts minutes never holds one LevelDB snapshot, and the files it pins, for all that time.
 *
 * <p>Cancellation: a pass stops early, between records, when its thread is interrupted (the node's
 * shutdown interrupts the maintenance executor and waits for it before closing storage).
 */
public final class ExpiryPurger {

    /**
     * How fast a pass may read.
     *
     * @param recordsPerSecond records read a second
     * @param bytesPerSecond   bytes (keys and values) read a second
     */
    public record Pacing(double recordsPerSecond, double bytesPerSecond) {
        /**
         * 20,000 records and 32 MiB a second, anti-entropy's own read pace: a pass over a million
         * records takes under a minute.
         */
        public static final Pacing DEFAULT = new Pacing(20_000, 32 << 20);
    }

    private static final Logger log = LoggerFactory.getLogger(ExpiryPurger.class);
    private static final int SCAN_BATCH = 256;
    private static final int SCAN_BYTES = 1 << 20;

    private final StorageService storage;
    private final Clock clock;
    private final long tombstoneGraceMillis;
    private final Pace recordPace;
    private final Pace bytePace;
    private final long expiryMarginMillis;
    private final BooleanSupplier clockTrusted;
    private final ReplicaHoldings holdings;
    private final AtomicLong tombstonesPurged = new AtomicLong();
    private volatile long tombstonesHeldBack;

    /** A purger with no other replica to wait for (a single node). */
    public ExpiryPurger(StorageService storage, Clock clock, long tombstoneGraceMillis) {
        this(storage, clock, tombstoneGraceMillis, Pacing.DEFAULT);
    }

    /** A purger with no other replica to wait for (a single node). */
    public ExpiryPurger(StorageService storage, Clock clock, long tombstoneGraceMillis, Pacing pace) {
        this(storage, clock, tombstoneGraceMillis, pace, 0, () -> true, ReplicaHoldings.NO_OTHER_REPLICAS);
    }

    /**
     * A purger that never deletes a value with a {@code ttl} before its peers would
     * (docs/operations.md#expiry-and-tombstones): the tombstone it writes outranks the value on
     * every replica, so a clock running ahead would delete it early everywhere.
     *
     * @param expiryMarginMillis how far this node's clock may be ahead of its peers' unnoticed
     *                           ({@code --max-clock-offset}): a value is purged once it has expired
     *                           by that much more
     * @param clockTrusted       false while this node's clock is known to be off from its peers'
     *                           by more than that; expired values are then left alone (old
     *                           tombstones are still dropped: their grace is days, not ms)
     * @param holdings           whether the other replicas of a tombstone's key are known to hold
     *                           it: a tombstone past its grace is dropped only then
     */
    public ExpiryPurger(StorageService storage, Clock clock, long tombstoneGraceMillis, Pacing pace,
                        long expiryMarginMillis, BooleanSupplier clockTrusted, ReplicaHoldings holdings) {
        this.storage = storage;
        this.clock = clock;
        this.tombstoneGraceMillis = tombstoneGraceMillis;
        this.recordPace = Pace.steady(pace.recordsPerSecond());
        this.bytePace = Pace.steady(pace.bytesPerSecond());
        this.expiryMarginMillis = expiryMarginMillis;
        this.clockTrusted = clockTrusted;
        this.holdings = holdings;
    }

    /** Tombstones the last whole pass found past their grace but kept, as a replica was not known to hold them. */
    public long tombstonesHeldBack() {
        return tombstonesHeldBack;
    }

    /** Tombstones dropped since start. */
    public long tombstonesPurged() {
        return tombstonesPurged.get();
    }

    /**
     * One full pass, or less if the thread is interrupted; returns the number of records changed.
     * Blocking, and paced; run it on its own thread.
     */
    public int runOnce() {
        int changed = 0;
        long heldBack = 0;
        byte[] from = new byte[0];
        List<Entry> batch;
        while (!Thread.currentThread().isInterrupted() && !(batch = nextBatch(from)).isEmpty()) {
            long now = clock.currentTimeMillis();
            boolean expire = clockTrusted.getAsBoolean();
            for (Entry e : batch) {
                if (Thread.currentThread().isInterrupted()) {
                    break; // keeps the interrupt: the caller's executor is shutting down
                }
                Record r = e.record();
                CompletableFuture<Boolean> done = null;
                boolean tombstone = r.tombstone();
                if (tombstone) {
                    if (HybridLogicalClock.physicalMillis(r.timestamp()) + tombstoneGraceMillis <= now) {
                        if (holdings.heldByEveryReplica(e.key(), r.timestamp())) {
                            done = storage.purge(e.key(), r, null);
                        } else {
                            heldBack++;
                        }
                    }
                } else if (expire && r.isExpiredAt(now - expiryMarginMillis)) {
                    done = storage.purge(e.key(), r, Record.tombstone(r.timestamp(), r.writer()));
                }
                if (done != null) {
                    // Wait for each change: the purger must never crowd out client writes.
                    if (done.exceptionally(t -> false).join()) {
                        changed++;
                        if (tombstone) {
                            tombstonesPurged.incrementAndGet();
                        }
                    }
                }
            }
            from = justAfter(batch.get(batch.size() - 1).key());
        }
        if (!Thread.currentThread().isInterrupted()) {
            tombstonesHeldBack = heldBack; // a whole pass's count only
        }
        if (changed > 0) {
            log.debug("purged {} expired records and old tombstones", changed);
        }
        return changed;
    }

    /** The next records from {@code from} on, read through a cursor of their own, after waiting for the pace. */
    private List<Entry> nextBatch(byte[] from) {
        List<Entry> batch;
        try (LevelDbStore.Cursor cursor = storage.store().cursor(from, null)) {
            batch = cursor.next(SCAN_BATCH, SCAN_BYTES);
        }
        if (!batch.isEmpty()) {
            long bytes = 0;
            for (Entry e : batch) {
                bytes += e.key().length + (e.record().value() == null ? 0 : e.record().value().length);
            }
            recordPace.acquire(batch.size());
            bytePace.acquire((int) Math.min(bytes, Integer.MAX_VALUE));
        }
        return batch;
    }

    /** The least key after {@code key} in LevelDB's unsigned byte order. */
    private static byte[] justAfter(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }
}
