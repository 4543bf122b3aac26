package io.kvorum.node.storage;

/**
 * What this node knows of its peers' copies, as the {@link ExpiryPurger} needs it to drop a
 * tombstone (docs/operations.md#tombstones-and-repair): a tombstone dropped while a replica of its
 * key still lacks it would let that replica bring the deleted value back.
 */
@FunctionalInterface
public interface ReplicaHoldings {

    /** For a single node, or replication factor 1: no other replica to wait for. */
    ReplicaHoldings NO_OTHER_REPLICAS = (key, timestamp) -> true;

    /**
     * Whether each of the key's replicas other than this node is known to hold its tombstone stamped
     * {@code timestamp} (or a newer version of the key); false when unknown. Called by the purger's
     * thread; quick, never blocks.
     */
    boolean heldByEveryReplica(byte[] key, long timestamp);
}
