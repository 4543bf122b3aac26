package io.kvorum.node.antientropy;

/** The serving side of anti-entropy, as a transport sees it: rounds that peers open with this node. */
public interface AntiEntropyResponders {

    /**
     * The responder side of a round that {@code initiator} opened with {@code open}; the transport
     * starts it on the round's stream.
     *
     * @throws RepairException {@code REFUSED} for an unknown initiator or parameters out of range,
     *                         {@code OVERLOADED} when this node serves as many rounds as it may
     */
    AntiEntropyResponder openResponder(String initiator, AntiEntropyMessage.Open open);
}
