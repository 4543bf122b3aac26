package io.kvorum.node.antientropy;

/** A peer that anti-entropy rounds can be opened with: the transport's side of an initiator. */
public interface AntiEntropyPeer {

    String nodeId();

    /**
     * Opens a stream to the peer and {@linkplain AntiEntropyInitiator#start starts} {@code round} on
     * it. Never throws: a stream that cannot be opened fails the round's result.
     */
    void open(AntiEntropyInitiator round);
}
