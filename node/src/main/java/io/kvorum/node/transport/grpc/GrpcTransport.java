package io.kvorum.node.transport.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.kvorum.node.cluster.ClusterIdentity;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.liveness.PeerProbe;
import io.kvorum.node.liveness.PingListener;
import io.kvorum.node.repair.AntiEntropyPeer;
import io.kvorum.node.repair.AntiEntropyService;
import io.kvorum.node.time.RequestTimer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC side of a node: the server that serves this node's replica, range scans,
 * anti-entropy and liveness pings to its peers, and per peer one channel shared by a
 * {@link GrpcPeerReplica}, a {@link GrpcRangeSource}, a {@link GrpcAntiEntropyPeer} and a
 * {@link GrpcPeerProbe}. Every channel starts connecting at once (none waits for a first request).
 * Lifecycle: {@link #start} binds or throws; {@link #close()} stops the server (letting calls in
 * progress finish briefly) and closes every peer channel, failing the calls still waiting.
 */
public final class GrpcTransport implements AutoCloseable {

    /** Headroom over the largest value for the rest of a message (key, header, record fields). */
    private static final int MESSAGE_OVERHEAD_BYTES = 64 * 1024;
    private static final int MAX_IN_FLIGHT_PER_PEER = 8192;
    private static final long MAX_IN_FLIGHT_BYTES_PER_PEER = 256L << 20;
    /** Range scan messages end past this size (plus one entry, which MESSAGE_OVERHEAD_BYTES allows for). */
    private static final int RANGE_MESSAGE_BYTES = 32 * 1024;
    /** The deadline of one anti-entropy round (the idle timeout of each wait is far shorter). */
    private static final Duration ANTI_ENTROPY_ROUND_DEADLINE = Duration.ofHours(1);
    /** How long a heartbeat waits for its answer (an announcement waits twice as long). */
    private static final Duration PING_TIMEOUT = Duration.ofSeconds(1);

    private final Server server;
    private final List<GrpcPeerReplica> peers;
    private final Map<String, RangeSource> peerRanges;
    private final List<AntiEntropyPeer> antiEntropyPeers;
    private final List<PeerProbe> probes;

    private GrpcTransport(Server server, List<GrpcPeerReplica> peers, Map<String, RangeSource> peerRanges,
                          List<AntiEntropyPeer> antiEntropyPeers, List<PeerProbe> probes) {
        this.server = server;
        this.peers = peers;
        this.peerRanges = peerRanges;
        this.antiEntropyPeers = antiEntropyPeers;
        this.probes = probes;
    }

    /**
     * Starts serving {@code local}, {@code localRange} and {@code antiEntropy} on this node's gRPC
     * port and creates the peer replicas, range sources and anti-entropy peers.
     *
     * @param grpcPort   the port to listen on; 0 picks a free one (tests)
     * @param timer      runs the per-batch timeouts of range scans
     * @param deadlines  runs the per-call deadlines of replica requests
     * @param localRange this node's raw entries, scanned by peers that coordinate a range
     * @param pings      told of the heartbeats and announcements peers send
     * @throws IOException when the port cannot be bound
     */
    public static GrpcTransport start(NodeConfig config, int grpcPort, Replica local, RangeSource localRange,
                                      ScheduledExecutorService timer, RequestTimer deadlines,
                                      AntiEntropyService antiEntropy, PingListener pings)
            throws IOException {
        String clusterId = ClusterIdentity.of(config.topology());
        ForeignClusterLog foreign = new ForeignClusterLog(clusterId);
        int maxMessage = config.maxValueBytes() + MESSAGE_OVERHEAD_BYTES;
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(config.bindAddress(), grpcPort))
                .addService(new ReplicationService(foreign, local))
                .addService(new LivenessService(foreign, pings))
                .addService(new RangeService(clusterId, localRange, RANGE_MESSAGE_BYTES))
                .addService(new AntiEntropyGrpcService(clusterId, antiEntropy))
                .directExecutor() // handlers only enqueue storage work; they never block
                .maxInboundMessageSize(maxMessage)
                .permitKeepAliveTime(5, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .build()
                .start();
        List<GrpcPeerReplica> peers = new java.util.ArrayList<>();
        Map<String, RangeSource> peerRanges = new HashMap<>();
        List<AntiEntropyPeer> antiEntropyPeers = new java.util.ArrayList<>();
        List<PeerProbe> probes = new java.util.ArrayList<>();
        for (ClusterMember m : config.topology().members()) {
            if (m.id().equals(config.self().id())) {
                continue;
            }
            ManagedChannel channel = NettyChannelBuilder.forAddress(m.host(), m.grpcPort())
                    .usePlaintext()
                    .directExecutor() // answers complete futures whose continuations are short
                    .maxInboundMessageSize(maxMessage)
                    .keepAliveTime(10, TimeUnit.SECONDS)
                    .keepAliveTimeout(5, TimeUnit.SECONDS)
                    .build();
            channel.getState(true); // connect now, not on the first request
            peers.add(new GrpcPeerReplica(m.id(), config.self().id(), clusterId, channel, deadlines,
                    config.requestTimeout(), MAX_IN_FLIGHT_PER_PEER,
                    Math.max(MAX_IN_FLIGHT_BYTES_PER_PEER, 4L * maxMessage)));
            peerRanges.put(m.id(), new GrpcRangeSource(m.id(), config.self().id(), clusterId, channel, timer,
                    config.requestTimeout()));
            antiEntropyPeers.add(new GrpcAntiEntropyPeer(m.id(), config.self().id(), clusterId, channel,
                    ANTI_ENTROPY_ROUND_DEADLINE));
            probes.add(new GrpcPeerProbe(m.id(), config.self().id(), clusterId, channel, PING_TIMEOUT));
        }
        return new GrpcTransport(server, List.copyOf(peers), Map.copyOf(peerRanges), List.copyOf(antiEntropyPeers),
                List.copyOf(probes));
    }

    /** One probe per peer, for the heartbeats. */
    public List<PeerProbe> probes() {
        return probes;
    }

    /** Drops the replication stream to a peer found down (see {@link GrpcPeerReplica#abandonStream}). */
    public void abandonStream(String peer) {
        peers.stream().filter(p -> p.nodeId().equals(peer)).forEach(GrpcPeerReplica::abandonStream);
    }

    /** The peers to run anti-entropy rounds with. */
    public List<AntiEntropyPeer> antiEntropyPeers() {
        return antiEntropyPeers;
    }

    /** The remote replicas, by node id. */
    public Map<String, Replica> peers() {
        Map<String, Replica> byId = new HashMap<>();
        peers.forEach(p -> byId.put(p.nodeId(), p));
        return byId;
    }

    /** The peers' raw range sources, by node id. */
    public Map<String, RangeSource> peerRanges() {
        return peerRanges;
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdown();
        if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
            server.shutdownNow(); // e.g. range scans for peers' clients: cancelled, they close their iterators
            server.awaitTermination(1, TimeUnit.SECONDS);
        }
        peers.forEach(GrpcPeerReplica::close);
    }

    /**
     * Stops at once: no grace for calls in progress (a simulated crash in tests). Waits briefly for
     * the server to terminate, so that cancelled range scans have closed their storage iterators
     * before the caller closes storage.
     */
    public void kill() {
        server.shutdownNow();
        peers.forEach(GrpcPeerReplica::close);
        try {
            server.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
