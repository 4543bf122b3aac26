package io.kvorum.node.membership;

import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.StorageService;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /v0/cleanup} (docs/operations.md#growing-and-shrinking-a-cluster): drops the records of the keys this node no longer replicates
 * (it is not among their first replication-factor replicas), as a membership change leaves them
 * behind; never anything else, and never by itself. Refused (409) while a change is in progress,
 * when records are still moving. Each record is dropped only if it is still the version the scan
 * read, one at a time, so that client writes keep the storage queue.
 */
public final class Cleanup {

    private static final Logger log = LoggerFactory.getLogger(Cleanup.class);
    private static final int SCAN_BATCH = 256;

    private final StorageService storage;
    private final Supplier<Membership> membership;
    private final String selfId;

    public Cleanup(StorageService storage, Supplier<Membership> membership, String selfId) {
        this.storage = storage;
        this.membership = membership;
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
                    if (!replicated && storage.purge(e.key(), e.record(), null).exceptionally(t -> false).join()) {
                        dropped++;
                    }
                }
            }
        }
        log.info("cleanup dropped {} record(s) this node no longer replicates (epoch {})", dropped, m.epoch());
        return dropped;
    }
}
