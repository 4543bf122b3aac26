package io.kvorum.node.coordinator;

import io.kvorum.node.model.Record;
import java.util.concurrent.CompletableFuture;

/**
 * Where the {@link Coordinator} hands a write that one of its remote replicas did not acknowledge
 * (it was down, refused, failed, or timed out and did not take it late either), so that it can be
 * delivered later: hinted handoff, docs/operations.md#how-replicas-converge. Called for every such replica, whether or not the
 * client was answered already, and never for the coordinator's own replica.
 *
 * <p>Called on gRPC and timer threads: implementations must return at once without blocking or
 * doing I/O, and may drop the hint (anti-entropy then repairs what it carried). The future they
 * return tells when the hint is kept as a crash would find it, so that the coordinator answers a
 * write only once the hints it made before the answer are (docs/operations.md#hinted-handoff).
 */
@FunctionalInterface
public interface HintSink {

    /** What {@link #hint} returns for a hint that is kept, or dropped, at once. */
    CompletableFuture<Void> KEPT = CompletableFuture.completedFuture(null);

    /** A sink that keeps nothing: for single-node clusters and tests. */
    HintSink NONE = (nodeId, key, record) -> KEPT;

    /**
     * @param nodeId the replica that missed the write
     * @param key    the key written; not copied, the caller does not change it
     * @param record the record the replica should have stored
     * @return completes, never exceptionally, once the hint is written where a crash of the
     *         process leaves it (fsynced with {@code --fsync}), or once it was dropped
     */
    CompletableFuture<Void> hint(String nodeId, byte[] key, Record record);
}
