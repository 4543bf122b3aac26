package io.kvorum.node.coordinator;

import io.kvorum.node.storage.Record;
import java.util.concurrent.CompletableFuture;

/** A peer this node has no transport to: every call fails at once, so it never costs a deadline. */
public final class UnreachableReplica implements Replica {

    private final String nodeId;

    public UnreachableReplica(String nodeId) {
        this.nodeId = nodeId;
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    @Override
    public CompletableFuture<Record> read(byte[] key) {
        return CompletableFuture.failedFuture(new IllegalStateException("no transport to " + nodeId));
    }

    @Override
    public CompletableFuture<Void> write(byte[] key, Record record) {
        return CompletableFuture.failedFuture(new IllegalStateException("no transport to " + nodeId));
    }
}
