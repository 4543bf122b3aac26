package io.kvorum.node.liveness;

import java.util.concurrent.CompletableFuture;

/**
 * Pings one peer, as the transport does it. The future completes when the peer answered, with the
 * peer's wall clock as it answered ({@link PingListener#wallClockMillis}; 0 from a peer that does
 * not tell it, a node of an older version) and what it remembers of this node's store, or fails
 * with {@link io.kvorum.node.coordinator.ReplicaUnavailableException} whose reason says whether
 * the connection failed ({@code UNREACHABLE}) or no answer came in time ({@code TIMED_OUT}).
 * Every ping has a deadline of the transport's choosing; none waits longer.
 */
public interface PeerProbe {

    /** How a ping treats the connection to the peer. */
    enum Kind {
        /** To a peer believed up: a connection that fails fails the ping at once. */
        HEARTBEAT,
        /**
         * To a peer believed down or unknown, or that has just announced itself: reconnect now,
         * skipping any reconnect backoff, and wait for the connection within the deadline.
         */
        RECONNECT,
        /**
         * This node has just started: fails at once when the first connection attempt fails (the
         * peer is down); otherwise the peer answers once it has reached this node back.
         */
        ANNOUNCE
    }

    String nodeId();

    /**
     * @param incarnation this node's store's incarnation ({@link Incarnations#own}), carried by the ping
     */
    CompletableFuture<Pong> ping(Kind kind, String incarnation);

    /**
     * A peer's answer.
     *
     * @param wallMillis  the peer's wall clock as it answered, 0 when it does not tell it
     * @param remembered  the incarnation the peer remembered for this node before the one the ping
     *                    named ({@link Incarnations#seen}); empty when none, or from an older node
     */
    record Pong(long wallMillis, String remembered) {
    }
}
