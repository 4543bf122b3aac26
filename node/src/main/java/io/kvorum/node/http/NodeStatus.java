package io.kvorum.node.http;

import io.kvorum.node.antientropy.AntiEntropyState;
import io.kvorum.node.storage.StorageFailures;
import java.util.Map;

/**
 * The body of {@code GET /v0/status} (docs/http-api.md), which the gateway serializes field by
 * field in this order. A part that does not apply is null, and then absent from the JSON.
 *
 * @param node              this node's id
 * @param status            {@value #SERVING}, or {@value #REBUILDING} while this node rebuilds its copies
 *                          after it lost its data (it coordinates requests, but its replica answers
 *                          no read until done: docs/operations.md#replacing-a-disk)
 * @param clusterSize       members of the cluster, this node included
 * @param replicationFactor replicas of each key
 * @param peers             what this node knows of each peer, by id; null in a single-node cluster
 * @param hints             the hinted-handoff counters; null without peers or with hinted handoff off
 * @param antiEntropy       the maintained trees and the last round with each peer; null without peers
 * @param storageBytes      about how many bytes this node's store takes on disk (LevelDB's estimate)
 * @param storageErrors     the reads and writes the store failed since the start; null if none
 * @param writesRefused     why this node refuses writes now (its clock is off from its peers'); null
 *                          while it accepts them
 * @param rebuilding        how the rebuild goes; null while {@link #status} is {@value #SERVING}
 */
public record NodeStatus(String node, String status, int clusterSize, int replicationFactor,
                         Map<String, Peer> peers, Hints hints, AntiEntropyState antiEntropy, long storageBytes,
                         StorageFailures.Summary storageErrors, String writesRefused, Rebuilding rebuilding) {

    public static final String SERVING = "serving";
    public static final String REBUILDING = "rebuilding";

    /** A serving node's status. */
    public static NodeStatus serving(String node, int clusterSize, int replicationFactor, Map<String, Peer> peers,
                                     Hints hints, AntiEntropyState antiEntropy, long storageBytes,
                                     StorageFailures.Summary storageErrors, String writesRefused) {
        return new NodeStatus(node, SERVING, clusterSize, replicationFactor, peers, hints, antiEntropy, storageBytes,
                storageErrors, writesRefused, null);
    }

    /** This status, of a node that is rebuilding its copies. */
    public NodeStatus rebuilding(Rebuilding how) {
        return new NodeStatus(node, REBUILDING, clusterSize, replicationFactor, peers, hints, antiEntropy, storageBytes,
                storageErrors, writesRefused, how);
    }

    /**
     * @param phase        {@code checking} (started on an empty store; asking the peers whether the cluster
     *                     knew it with data) or {@code streaming} (taking its keys' records from the peers)
     * @param recordsTaken records taken from the peers since this node started
     */
    public record Rebuilding(String phase, long recordsTaken) {
    }

    /**
     * One peer as this node sees it.
     *
     * @param state     {@code up}, {@code down} or {@code unknown}
     * @param since     when it entered {@code state}, epoch ms (for {@code unknown}: this node's start)
     * @param rttMicros the last heartbeat's round trip, -1 until one is measured
     * @param address   its HTTP address, host:port, as {@code --cluster} gives it
     * @param clockOffsetMillis its wall clock minus this node's, as heartbeats last measured it; null
     *                  until measured, or once it stopped answering
     */
    public record Peer(String state, long since, long rttMicros, String address, Long clockOffsetMillis) {
    }

    /**
     * @param pending   hints stored, by the peer they are for (only peers that have some)
     * @param delivered hints delivered since this node started
     * @param dropped   hints dropped since this node started
     */
    public record Hints(Map<String, Long> pending, long delivered, long dropped) {
    }
}
