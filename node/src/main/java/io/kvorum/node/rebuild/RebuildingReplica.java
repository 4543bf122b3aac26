package io.kvorum.node.rebuild;

import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import java.util.concurrent.CompletableFuture;

/**
 * This node's replica as coordinators see it, this node's own included: while {@link Rebuild}
 * refuses reads (the store lost the data the cluster expects of it, or may have), every read fails
 * with a {@link RebuildingException}, so that it counts as a failed replica and never as one that
 * holds no version of the key (docs/operations.md#replacing-a-disk). Writes are stored as ever.
 */
public record RebuildingReplica(Replica local, Rebuild rebuild) implements Replica {

    @Override
    public String nodeId() {
        return local.nodeId();
    }

    @Override
    public CompletableFuture<Record> read(byte[] key) {
        return rebuild.refuseReads() ? CompletableFuture.failedFuture(rebuild.refusal()) : local.read(key);
    }

    @Override
    public CompletableFuture<RecordDigest> readDigest(byte[] key) {
        return rebuild.refuseReads() ? CompletableFuture.failedFuture(rebuild.refusal()) : local.readDigest(key);
    }

    @Override
    public CompletableFuture<Boolean> write(byte[] key, Record record) {
        return local.write(key, record);
    }

    @Override
    public CompletableFuture<Boolean> writeFromPeer(byte[] key, Record record) {
        return local.writeFromPeer(key, record);
    }
}
