package io.kvorum.node.liveness;

/**
 * What pings carry about the peers' stores (docs/operations.md#replacing-a-disk): each ping names the
 * incarnation of the sender's store, and each answer the incarnation the receiver remembered for
 * the sender before that one. A node that started on an empty store learns so whether the cluster
 * knew it as a member holding data. Called on the transport's and the heartbeats' threads.
 */
public interface Incarnations {

    /** This node's store's incarnation, sent with every ping. */
    String own();

    /**
     * A member pinged this node naming {@code incarnation} (empty from a node that names none):
     * remembers it, durably, and returns the incarnation remembered for the member before it, empty
     * if none. Asked again with the same incarnation, returns the same answer.
     */
    String seen(String member, String incarnation);

    /** A peer answered this node's ping with the incarnation it remembered for this node before its own. */
    void answered(String peer, String remembered);

    /** A ping to a peer failed: the peer is down or unreachable for now. */
    void unanswered(String peer);

    /** Nothing sent, nothing remembered: for tests of liveness alone. */
    Incarnations NONE = new Incarnations() {
        @Override
        public String own() {
            return "";
        }

        @Override
        public String seen(String member, String incarnation) {
            return "";
        }

        @Override
        public void answered(String peer, String remembered) {
        }

        @Override
        public void unanswered(String peer) {
        }
    };
}
