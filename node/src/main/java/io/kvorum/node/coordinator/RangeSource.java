package io.kvorum.node.coordinator;

import io.kvorum.node.model.EntryStream;

/**
 * Opens the raw entry stream (tombstones and expired records included) of a key range: one
 * node's, or the whole cluster's ({@link ClusterRangeSource}).
 */
@FunctionalInterface
public interface RangeSource {

    /**
     * Entries with {@code start <= key < end}; {@code end == null} means to the last key. Opening
     * does no I/O and does not fail: a node that cannot be read fails the stream's first batch.
     */
    EntryStream open(byte[] start, byte[] end);

    /**
     * {@link #open(byte[], byte[])} with only the entries {@code selection} gives a joining node
     * (docs/architecture.md#how-a-join-moves-records); every entry when it is null. A node's
     * remote source sends the selection to the node, which selects where the records are.
     */
    default EntryStream open(byte[] start, byte[] end, JoinSelection selection) {
        return selection == null ? open(start, end) : selection.select(open(start, end));
    }
}
