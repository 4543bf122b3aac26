package io.kvorum.node.coordinator;

import io.kvorum.node.model.Record;

/**
 * Where the {@link Coordinator} hands a write that one of its remote replicas did not acknowledge
 * (it was down, refused, failed, or timed out and did not take it late either), so that it can be
 * delivered later: hinted handoff, docs/operations.md#how-replicas-converge. Called for every such replica, whether or not the
 * client was answered already, and never for the coordinator's own replica.
 *
 * <p>Called on gRPC and timer threads: implementations must return at once without blocking or
 * doing I/O, and may drop the hint (anti-entropy then repairs what it carried).
 */
@FunctionalInterface
public interface HintSink {

    /** A sink that keeps nothing: for single-node clusters and tests. */
    HintSink NONE = (nodeId, key, record) -> { };

    /**
     * @param nodeId the replica that missed the write
     * @param key    the key written; not copied, the caller does not change it
     * @param record the record the replica should have stored
     */
    void hint(String nodeId, byte[] key, Record record);
}
