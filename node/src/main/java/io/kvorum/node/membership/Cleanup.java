package io.kvorum.node.membership;

import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.util.Failures;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /v0/cleanup} (docs/operations.md#growing-and-shrinking-a-cluster): drops the records of the keys this node no longer replicates
 * (it is not among their first replication-factor replicas), as a membership change leaves them
 * behind; never anything else, and never by itself. Refused (409) while a change is in progress,
 * when records are still moving. Each record is dropped only if it is still the version the scan
 * read, one at a time, so that client writes keep the storage queue.
 *
 * <p>A change that starts while it runs stops it (409, with what it dropped so far): the
 * placement it judges by is the one of the epoch it started at. Before each record it drops, it
 * checks that this node's epoch is still that one and that no member's request carried a newer
 * one; a record dropped while that changed is written back, so that a node that becomes one of
 * its replicas, or a member that asks it for its digest of the key, finds it.
 */
public final class Cleanup {

    private static final Logger log = LoggerFactory.getLogger(Cleanup.class);
    private static final int SCAN_BATCH = 256;

    private final StorageService storage;
    private final Supplier<Membership> membership;
    private final LongSupplier newestEpochSeen;
    private final String selfId;

    /**
     * @param membership      the membership this node runs with
     * @param newestEpochSeen the newest epoch this node knows of, adopted or only seen on a member's request
     */
    public Cleanup(StorageService storage, Supplier<Membership> membership, LongSupplier newestEpochSeen,
                   String selfId) {
        this.storage = storage;
        this.membership = membership;
        this.newestEpochSeen = newestEpochSeen;
        this.selfId = selfId;
    }

    /** One pass; returns how many records it dropped. Blocking: run it on its own thread. */
    public long run() {
        Membership m = membership.get();
        if (m.inChange()) {
            throw new MembershipChangeException(MembershipChangeException.Reason.IN_PROGRESS,
                    "cleanup waits for the change in progress to complete (epoch " + m.epoch() + ")");
        }
        Placement placement = new Placement(m.current());
        int replicas = Math.min(m.replicationFactor(), placement.size());
        long dropped = 0;
        try (LevelDbStore.Cursor cursor = storage.store().cursor(new byte[0], null)) {
            List<Entry> batch;
            while (!Thread.currentThread().isInterrupted() && !(batch = cursor.next(SCAN_BATCH, 1 << 20)).isEmpty()) {
                for (Entry e : batch) {
                    boolean replicated = placement.replicasFor(e.key(), replicas).stream()
                            .anyMatch(member -> member.id().equals(selfId));
                    if (replicated) {
                        continue;
                    }
                    stopIfChanged(m, dropped);
                    if (storage.purge(e.key(), e.record(), null).exceptionally(t -> false).join()) {
                        if (changedSince(m)) {
                            writeBack(e);
                            stopIfChanged(m, dropped);
                        }
                        dropped++;
                    }
                }
            }
        }
        log.info("cleanup dropped {} record(s) this node no longer replicates (epoch {})", dropped, m.epoch());
        return dropped;
    }

    private boolean changedSince(Membership m) {
        return membership.get().epoch() != m.epoch() || newestEpochSeen.getAsLong() > m.epoch();
    }

    private void stopIfChanged(Membership m, long dropped) {
        if (changedSince(m)) {
            long now = Math.max(membership.get().epoch(), newestEpochSeen.getAsLong());
            log.info("cleanup stopped after dropping {} record(s): a membership change (epoch {}) started while it ran "
                    + "at epoch {}", dropped, now, m.epoch());
            throw new MembershipChangeException(MembershipChangeException.Reason.IN_PROGRESS, "cleanup stopped after "
                    + "dropping " + dropped + " record(s): a membership change (epoch " + now + ") started while it "
                    + "ran at epoch " + m.epoch() + "; run it again once the change is complete");
        }
    }

    /** Writes back a record dropped while the membership changed (kept unless a newer version came meanwhile). */
    private void writeBack(Entry e) {
        try {
            storage.write(e.key(), e.record()).join();
        } catch (RuntimeException failure) {
            log.warn("cleanup could not write back a record it dropped as the membership changed ({}); anti-entropy "
                    + "or a repair restores it from its other replicas", Failures.unwrap(failure).toString());
        }
    }
}
