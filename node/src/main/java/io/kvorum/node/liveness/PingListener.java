package io.kvorum.node.liveness;

import java.util.concurrent.CompletableFuture;

/** The receiving side of pings: what the transport tells the core when a peer pings this node. */
public interface PingListener {

    /** A peer sent a heartbeat. */
    void pinged(String peer);

    /**
     * A peer announced that it has just started. The transport answers the announcement when the
     * returned future completes: once this node has reached the peer back, or failed to.
     */
    CompletableFuture<Void> announced(String peer);

    /**
     * This node's wall clock, epoch ms, which every answer to a ping carries as it is sent: the
     * pinging peer measures from it how far the two nodes' clocks are apart ({@link ClockOffsets}).
     */
    long wallClockMillis();

    /**
     * Every ping names the incarnation of the sender's store; the answer carries what this returns
     * ({@link Incarnations#seen}). Called before {@link #pinged} or {@link #announced}.
     */
    String incarnationSeen(String peer, String incarnation);
}
