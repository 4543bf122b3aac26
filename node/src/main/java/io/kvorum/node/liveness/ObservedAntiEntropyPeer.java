package io.kvorum.node.liveness;

import io.kvorum.node.antientropy.AntiEntropyInitiator;
import io.kvorum.node.antientropy.AntiEntropyPeer;

/**
 * A peer's {@link AntiEntropyPeer} whose completed rounds count as answers of the peer in
 * {@link PeerLiveness}. Failed rounds teach nothing: a round also fails for reasons of its own
 * (its deadline, a refusal while the peer is busy with another round).
 */
public record ObservedAntiEntropyPeer(AntiEntropyPeer peer, PeerLiveness liveness) implements AntiEntropyPeer {

    @Override
    public String nodeId() {
        return peer.nodeId();
    }

    @Override
    public void open(AntiEntropyInitiator round) {
        round.result().thenRun(() -> liveness.answered(peer.nodeId(), -1));
        peer.open(round);
    }
}
