package io.kvorum.node.coordinator;

import io.kvorum.node.model.EntryStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * The raw entries of a range across the whole cluster (SPEC §4): opens one stream per node (this
 * node's in-process, the peers' over the network) and merges them with {@link MergedEntryStream},
 * newest version per key. The range is served while fewer than the replication factor of nodes
 * fail to answer its first batch, since every key then still has a live replica among its first
 * RF; with RF or more down, it fails with {@link NotEnoughReplicasException} before any entry.
 *
 * <p>A cluster of one node reads its own stream directly, as before ranges went cluster-wide.
 */
public final class ClusterRangeSource implements RangeSource {

    private volatile Map<String, RangeSource> nodes;
    private final int replicationFactor;
    private final int batchEntries;
    private final int batchBytes;
    private final LongConsumer timestampObserver;

    /**
     * @param nodes             every node's raw range source, by node id, this node's included
     * @param replicationFactor {@code --replication-factor}: that many nodes down fail a range
     * @param batchEntries      the most entries in one merged batch
     * @param batchBytes        a merged batch ends once its keys and values reach this size
     * @param timestampObserver sees the timestamp of each version returned (the coordinator's HLC)
     */
    public ClusterRangeSource(Map<String, RangeSource> nodes, int replicationFactor, int batchEntries, int batchBytes,
                              LongConsumer timestampObserver) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("a range needs at least one node");
        }
        this.nodes = new LinkedHashMap<>(nodes);
        this.replicationFactor = replicationFactor;
        this.batchEntries = batchEntries;
        this.batchBytes = batchBytes;
        this.timestampObserver = timestampObserver;
    }

    /**
     * Reads from {@code next} from now on (the members whose replicas serve reads, after a
     * membership change); ranges already open keep their streams.
     */
    public void useNodes(Map<String, RangeSource> next) {
        if (next.isEmpty()) {
            throw new IllegalArgumentException("a range needs at least one node");
        }
        nodes = new LinkedHashMap<>(next);
    }

    @Override
    public EntryStream open(byte[] start, byte[] end) {
        Map<String, RangeSource> nodes = this.nodes;
        if (nodes.size() == 1) {
            return nodes.values().iterator().next().open(start, end);
        }
        List<MergedEntryStream.Named> streams = new ArrayList<>(nodes.size());
        nodes.forEach((id, source) -> streams.add(new MergedEntryStream.Named(id, source.open(start, end))));
        return new MergedEntryStream(streams, replicationFactor - 1, batchEntries, batchBytes, timestampObserver);
    }
}
