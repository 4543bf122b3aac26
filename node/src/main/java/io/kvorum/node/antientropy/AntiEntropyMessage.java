package io.kvorum.node.antientropy;

import io.kvorum.node.model.Entry;
import java.util.List;

/**
 * One step of an anti-entropy round, as the core sees it; the transport converts each to and from
 * its wire form ({@code antientropy.proto} documents the order of the steps). Arrays are not
 * copied: a message is built, sent and dropped.
 */
public sealed interface AntiEntropyMessage {

    /** Initiator, first: the round's replication factor and tree shape. */
    record Open(int replicationFactor, int fanoutBits, int depth) implements AntiEntropyMessage {
    }

    /** Initiator: the hashes it wants of some nodes of one level. */
    record HashQuery(int level, int[] indices) implements AntiEntropyMessage {
    }

    /** Responder: the hashes of the queried nodes, in the query's order. */
    record NodeHashes(int level, long[] hashes) implements AntiEntropyMessage {
    }

    /** Initiator: a chunk of the differing leaves; {@code last} ends the list. */
    record DifferingBuckets(int[] buckets, boolean last) implements AntiEntropyMessage {
    }

    /** Either side: records of differing buckets, to be applied last-write-wins. */
    record Records(List<Entry> entries) implements AntiEntropyMessage {
    }

    /** Either side: every record of the differing buckets has been sent. */
    record Done() implements AntiEntropyMessage {
    }
}
