package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import io.kvorum.node.model.Entry;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
 *   <li>deletes tombstones whose timestamp is older than the grace period, by which time every
 *       replica has had the chance to learn of them (Cassandra's {@code gc_grace_seconds}).</li>
 * </ul>
 * Each change goes through the writer as a {@link Mutation.Purge}, which acts only if
 * the record is still the one the scan saw, so a concurrent write is never lost.
 *
 * <p>Cancellation: a pass stops early, between records, when its thread is interrupted (the node's
 * shutdown interrupts the maintenance executor and waits for it before closing storage).
 */
public record ExpiryPurger(StorageService storage, Clock clock, long tombstoneGraceMillis) {

    private static final Logger log = LoggerFactory.getLogger(ExpiryPurger.class);
    private static final int SCAN_BATCH = 256;

    /**
     * One full pass, or less if the thread is interrupted; returns the number of records changed.
     * Blocking; run it on its own thread.
     */
    public int runOnce() {
        int changed = 0;
        try (LevelDbStore.Cursor cursor = storage.store().cursor(new byte[0], null)) {
            List<Entry> batch;
            while (!Thread.currentThread().isInterrupted() && !(batch = cursor.next(SCAN_BATCH, 1 << 20)).isEmpty()) {
                long now = clock.currentTimeMillis();
                for (Entry e : batch) {
                    if (Thread.currentThread().isInterrupted()) {
                        break; // keeps the interrupt: the caller's executor is shutting down
                    }
                    Record r = e.record();
                    CompletableFuture<Boolean> done = null;
                    if (r.tombstone()) {
                        if (HybridLogicalClock.physicalMillis(r.timestamp()) + tombstoneGraceMillis <= now) {
                            done = storage.purge(e.key(), r, null);
                        }
                    } else if (r.isExpiredAt(now)) {
                        done = storage.purge(e.key(), r, Record.tombstone(r.timestamp(), r.writer()));
                    }
                    if (done != null) {
                        // Wait for each change: the purger must never crowd out client writes.
                        if (done.exceptionally(t -> false).join()) {
                            changed++;
                        }
                    }
                }
            }
        }
        if (changed > 0) {
            log.debug("purged {} expired records and old tombstones", changed);
        }
        return changed;
    }
}
