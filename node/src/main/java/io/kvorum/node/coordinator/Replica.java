package io.kvorum.node.coordinator;

import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import java.util.concurrent.CompletableFuture;

/**
 * The replica side of the protocol as the coordinator sees it: one node's storage, local (served
 * in-process) or remote (over the peer's gRPC stream). Futures may complete on any thread, and
 * fail with {@link io.kvorum.node.storage.StorageOverloadedException} when the replica refused the
 * work, or any other exception when it could not be reached or failed.
 */
public interface Replica {

    String nodeId();

    /** The replica's stored version of the key, tombstones and expired records included; null if none. */
    CompletableFuture<Record> read(byte[] key);

    /**
     * The digest of what {@link #read} would answer ({@link RecordDigest#of}); null if none. The
     * replica computes it where the record is, so that the value never travels to the coordinator.
     */
    CompletableFuture<RecordDigest> readDigest(byte[] key);

    /**
     * Stores the record unless the replica holds a newer version; completes once durable, with
     * whether it changed the replica (false: it already held this or a newer version).
     */
    CompletableFuture<Boolean> write(byte[] key, Record record);

    /**
     * {@link #write} of a record a peer sent on the replication stream: a write it coordinated, a
     * hint, a read repair or a record a leaving member hands over. A replica may refuse what it
     * would not take from a peer (a timestamp too far ahead, docs/operations.md#clocks).
     */
    default CompletableFuture<Boolean> writeFromPeer(byte[] key, Record record) {
        return write(key, record);
    }
}
