package io.kvorum.node.antientropy;

/**
 * What one anti-entropy round with one peer did, from this node's side.
 *
 * @param peer             the other node
 * @param bucketsCompared  leaves of the tree whose equality was decided (all of them, when the round completes)
 * @param bucketsDiffering leaves that differed, whose records both sides sent
 * @param recordsSent      records this node sent
 * @param recordsReceived  records this node received (and applied, last write wins)
 * @param bytesSent        serialized bytes of the messages this node sent
 * @param bytesReceived    serialized bytes of the messages this node received
 * @param durationMs       from opening the stream to the peer's final answer
 */
public record RoundStats(String peer, long bucketsCompared, long bucketsDiffering, long recordsSent,
                         long recordsReceived, long bytesSent, long bytesReceived, long durationMs) {
}
