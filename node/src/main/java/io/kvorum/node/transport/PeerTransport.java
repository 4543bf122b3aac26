package io.kvorum.node.transport;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.MembershipPeer;
import io.kvorum.node.cluster.MembershipResponder;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.util.EventLoops;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.liveness.PeerProbe;
import io.kvorum.node.liveness.PingListener;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.backup.BackupParticipant;
import io.kvorum.node.antientropy.AntiEntropyResponders;
import io.kvorum.node.time.RequestTimer;
import java.io.IOException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * How a node reaches its peers and is reached by them: the seam between the core and the network.
 * Production uses gRPC ({@code transport.grpc.GrpcTransport}); tests may plug in a transport of
 * their own, e.g. one in memory whose links they can delay, drop or cut.
 *
 * <p>Per peer, a transport provides the handles the core uses ({@link Peer}): a {@link Replica}
 * (reads and writes), a {@link RangeSource} (the peer's raw entries of a range), an
 * {@link AntiEntropyPeer} (anti-entropy rounds), a {@link PeerProbe} (liveness) and a
 * {@link MembershipPeer}. Contracts are those of each interface: every call has a deadline,
 * failures are reported through the returned futures and streams, and nothing blocks the caller.
 * Every request carries this node's cluster identity and membership epoch, read from
 * {@link LocalServices#membership} when it is sent; an epoch seen on a request served is reported
 * to it.
 *
 * <p>Lifecycle: {@link #start} once, then {@link #connect} and {@link #disconnect} as members come
 * and go; {@link #close()} (graceful) or {@link #kill()} (a simulated crash) once.
 */
public interface PeerTransport {

    /** Creates a node's transport. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param scheduler runs the transport's own timeouts (e.g. of range batches)
         * @param deadlines runs the per-call deadlines of replica requests
         * @param loops     the node's network threads, for a transport that does network I/O
         */
        PeerTransport create(NodeConfig config, ScheduledExecutorService scheduler, RequestTimer deadlines, EventLoops loops);
    }

    /** What this node serves to its peers. */
    record LocalServices(Replica replica, RangeSource range, AntiEntropyResponders antiEntropy, PingListener pings,
                         MembershipResponder membership, BackupParticipant backup) {
    }

    /** The handles of one connected peer. */
    record Peer(String nodeId, Replica replica, RangeSource range, AntiEntropyPeer antiEntropy, PeerProbe probe,
                MembershipPeer membership, BackupParticipant backup) {
    }

    /**
     * Starts serving {@code local} to the peers.
     *
     * @throws IOException when the transport cannot listen (e.g. its port is in use)
     */
    void start(LocalServices local) throws IOException;

    /**
     * Starts connecting to {@code member} (without waiting for a first request) and returns its
     * handles. A member already connected is connected again only after {@link #disconnect}.
     */
    Peer connect(ClusterMember member);

    /** Closes the connection to a member that left, failing the calls still waiting for it. */
    void disconnect(String peer);

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
