package io.kvorum.node.coordinator;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.storage.StorageException;
import io.kvorum.node.util.Failures;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * The raw entries of a range across the whole cluster (docs/http-api.md (ranges)): opens one stream per node (this
 * node's in-process, the peers' over the network) and merges them with {@link MergedEntryStream},
 * newest version per key among the key's replicas. The range is served while fewer than the
 * replication factor of nodes fail to answer its first batch, since every key then still has a live replica among its first
 * RF; with RF or more down, it fails with {@link NotEnoughReplicasException} before any entry.
 *
 * <p>A cluster of one node reads its own stream directly, as before ranges went cluster-wide; a
 * storage failure there answers 504 too.
 */
public final class ClusterRangeSource implements RangeSource {

    /** The nodes a range reads, and which of them replicate a key; replaced together. */
    private record Readers(Map<String, RangeSource> nodes, Function<byte[], List<String>> replicasOf) {
    }

    private volatile Readers readers;
    private final int replicationFactor;
    private final int batchEntries;
    private final int batchBytes;
    private final LongConsumer timestampObserver;

    /**
     * @param nodes             every node's raw range source, by node id, this node's included
     * @param replicasOf        the ids of the nodes that replicate a key ({@link #replicasUnder})
     * @param replicationFactor {@code --replication-factor}: that many nodes down fail a range
     * @param batchEntries      the most entries in one merged batch
     * @param batchBytes        a merged batch ends once its keys and values reach this size
     * @param timestampObserver sees the timestamp of each version returned (the coordinator's HLC)
     */
    public ClusterRangeSource(Map<String, RangeSource> nodes, Function<byte[], List<String>> replicasOf,
                              int replicationFactor, int batchEntries, int batchBytes, LongConsumer timestampObserver) {
        useNodes(nodes, replicasOf);
        this.replicationFactor = replicationFactor;
        this.batchEntries = batchEntries;
        this.batchBytes = batchBytes;
        this.timestampObserver = timestampObserver;
    }

    /**
     * The replicas of each key among {@code readers}, the members whose replicas serve reads: the
     * first {@code replicationFactor} of its ordering, as a read with the default {@code from} asks.
     */
    public static Function<byte[], List<String>> replicasUnder(Topology readers, int replicationFactor) {
        Placement placement = new Placement(readers);
        int count = Math.min(replicationFactor, placement.size());
        return key -> placement.replicasFor(key, count).stream().map(ClusterMember::id).toList();
    }

    /**
     * Reads from {@code next} from now on, with {@code replicasOf} saying which of them replicate a
     * key (the members whose replicas serve reads, after a membership change); ranges already open
     * keep their streams.
     */
    public void useNodes(Map<String, RangeSource> next, Function<byte[], List<String>> replicasOf) {
        if (next.isEmpty()) {
            throw new IllegalArgumentException("a range needs at least one node");
        }
        readers = new Readers(new LinkedHashMap<>(next), replicasOf);
    }

    @Override
    public EntryStream open(byte[] start, byte[] end) {
        Readers now = readers;
        if (now.nodes().size() == 1) {
            return new OneNode(now.nodes().values().iterator().next().open(start, end));
        }
        List<MergedEntryStream.Named> streams = new ArrayList<>(now.nodes().size());
        now.nodes().forEach((id, source) -> streams.add(new MergedEntryStream.Named(id, source.open(start, end))));
        return new MergedEntryStream(streams, now.replicasOf(), replicationFactor - 1, batchEntries, batchBytes,
                timestampObserver);
    }

    /**
     * The stream of the only node, whose storage failures answer as the merge's do when a node
     * fails: {@link NotEnoughReplicasException}, a 504, as a {@code GET} whose replica failed. A
     * damaged table answered ranges 500 with the exception's text and a stack trace each time, when
     * {@code StorageFailures} has counted and logged the failure already.
     */
    private record OneNode(EntryStream stream) implements EntryStream {
        @Override
        public CompletableFuture<List<Entry>> next() {
            return stream.next().exceptionallyCompose(error -> CompletableFuture.failedFuture(
                    Failures.unwrap(error) instanceof StorageException failed
                            ? new NotEnoughReplicasException("this node's store failed the range: " + failed.getMessage())
                            : error));
        }

        @Override
        public void close() {
            stream.close();
        }
    }
}
