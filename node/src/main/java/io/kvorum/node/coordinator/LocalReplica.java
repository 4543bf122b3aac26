package io.kvorum.node.coordinator;

import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.HybridLogicalClock;
import java.util.concurrent.CompletableFuture;

/**
 * This node's own storage as a {@link Replica}: served in-process, never through the network.
 *
 * @param hlc moves past the timestamp of every record written here, whoever coordinated it
 */
public record LocalReplica(String nodeId, StorageService storage, HybridLogicalClock hlc) implements Replica {

    @Override
    public CompletableFuture<Record> read(byte[] key) {
        return storage.read(key);
    }

    /** The value is hashed as the read completes, on a storage reader thread as a rule. */
    @Override
    public CompletableFuture<RecordDigest> readDigest(byte[] key) {
        return storage.read(key).thenApply(RecordDigest::of);
    }

    @Override
    public CompletableFuture<Boolean> write(byte[] key, Record record) {
        hlc.observe(record.timestamp());
        return storage.write(key, record);
    }
}
