package io.kvorum.node.coordinator;

import io.kvorum.node.storage.Record;
import io.kvorum.node.storage.StorageService;
import java.util.concurrent.CompletableFuture;

/** This node's own storage as a {@link Replica}: served in-process, never through the network. */
public final class LocalReplica implements Replica {

    private final String nodeId;
    private final StorageService storage;

    public LocalReplica(String nodeId, StorageService storage) {
        this.nodeId = nodeId;
        this.storage = storage;
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    @Override
    public CompletableFuture<Record> read(byte[] key) {
        return storage.read(key);
    }

    @Override
    public CompletableFuture<Void> write(byte[] key, Record record) {
        return storage.write(key, record).thenApply(applied -> null);
    }
}
