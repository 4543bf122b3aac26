package io.kvorum.node.transport;

import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.liveness.PeerProbe;
import io.kvorum.node.liveness.PingListener;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.antientropy.AntiEntropyResponders;
import io.kvorum.node.time.RequestTimer;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

/**
 * How a node reaches its peers and is reached by them: the seam between the core and the network.
 * Production uses gRPC ({@code transport.grpc.GrpcTransport}); tests may plug in a transport of
 * their own, e.g. one in memory whose links they can delay, drop or cut (STYLE 3 and 12).
 *
 * <p>Per peer, a transport provides the four handles the core uses: a {@link Replica} (reads and
 * writes), a {@link RangeSource} (the peer's raw entries of a range), an {@link AntiEntropyPeer}
 * (anti-entropy rounds) and a {@link PeerProbe} (liveness). Contracts are those of each interface:
 * every call has a deadline, failures are reported through the returned futures and streams, and
 * nothing blocks the caller.
 *
 * <p>Lifecycle: {@link #start} once, then the handles; {@link #close()} (graceful) or
 * {@link #kill()} (a simulated crash) once.
 */
public interface PeerTransport {

    /** Creates a node's transport. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param scheduler runs the transport's own timeouts (e.g. of range batches)
         * @param deadlines runs the per-call deadlines of replica requests
         */
        PeerTransport create(NodeConfig config, ScheduledExecutorService scheduler, RequestTimer deadlines);
    }

    /** What this node serves to its peers. */
    record LocalServices(Replica replica, RangeSource range, AntiEntropyResponders antiEntropy, PingListener pings) {
    }

    /**
     * Starts serving {@code local} to the peers and starts connecting to every peer (none waits for
     * a first request).
     *
     * @throws IOException when the transport cannot listen (e.g. its port is in use)
     */
    void start(LocalServices local) throws IOException;

    /** The peers as replicas, by node id. */
    Map<String, Replica> replicas();

    /** The peers' raw range sources, by node id. */
    Map<String, RangeSource> ranges();

    /** The peers to run anti-entropy rounds with. */
    List<AntiEntropyPeer> antiEntropyPeers();

    /** One liveness probe per peer. */
    List<PeerProbe> probes();

    /**
     * Fails the requests waiting for a peer that was found down and drops what is buffered for it;
     * later requests open a new connection or stream as needed.
     */
    void abandonStream(String peer);

    /**
     * Graceful stop: stops serving (letting calls in progress finish briefly), then fails every call
     * of this node still waiting for a peer before it returns, so that what callers do on failure
     * (hint a write) happens before the node closes what that needs.
     */
    void close() throws InterruptedException;

    /** Stops at once, as a crash looks to the peers; returns once served scans have ended. */
    void kill();
}
