package io.kvorum.node.transport.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.liveness.PeerProbe;
import io.kvorum.node.security.TlsFiles;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.transport.PeerTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The production {@link PeerTransport}: a gRPC server that serves this node's replica, range
 * scans, anti-entropy and liveness pings to its peers, and per peer one channel shared by a
 * {@link GrpcPeerReplica}, a {@link GrpcRangeSource}, a {@link GrpcAntiEntropyPeer} and a
 * {@link GrpcPeerProbe}. Every channel starts connecting at {@link #start}. Its limits and
 * deadlines are {@link Tuning.Grpc}.
 */
public final class GrpcTransport implements PeerTransport {

    /** The production transport, for {@code KvorumNode}. */
    public static final Factory FACTORY = GrpcTransport::new;

    private final NodeConfig config;
    private final ScheduledExecutorService scheduler;
    private final RequestTimer deadlines;
    private Server server;
    private final List<GrpcPeerReplica> peers = new ArrayList<>();
    private final Map<String, RangeSource> peerRanges = new HashMap<>();
    private final List<AntiEntropyPeer> antiEntropyPeers = new ArrayList<>();
    private final List<PeerProbe> probes = new ArrayList<>();

    /**
     * @param scheduler runs the per-batch timeouts of range scans
     * @param deadlines runs the per-call deadlines of replica requests
     */
    private GrpcTransport(NodeConfig config, ScheduledExecutorService scheduler, RequestTimer deadlines) {
        this.config = config;
        this.scheduler = scheduler;
        this.deadlines = deadlines;
    }

    /** Binds this node's gRPC port (of its {@code --cluster} entry) and opens a channel to every peer. */
    @Override
    public void start(LocalServices local) throws IOException {
        String clusterId = config.clusterIdentity();
        Tuning.Grpc tuning = config.tuning().grpc();
        int maxMessage = config.maxValueBytes() + tuning.messageOverheadBytes();
        TlsFiles tls = config.security().tls(); // with TLS: mutual, a peer without a certificate of the CA is refused
        server = NettyServerBuilder.forAddress(new InetSocketAddress(config.bindAddress(), config.self().grpcPort()),
                        GrpcTls.server(tls))
                .addService(new ReplicationService(local.replica()))
                .addService(new LivenessService(local.pings()))
                .addService(new RangeService(local.range(), tuning.rangeMessageBytes()))
                .addService(new AntiEntropyGrpcService(local.antiEntropy()))
                .intercept(new ClusterCheck(new ForeignClusterLog(clusterId)))
                .directExecutor() // handlers only enqueue storage work; they never block
                .maxInboundMessageSize(maxMessage)
                .permitKeepAliveTime(5, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .build()
                .start();
        String selfId = config.self().id();
        for (ClusterMember m : config.topology().members()) {
            if (m.id().equals(selfId)) {
                continue;
            }
            ManagedChannel channel = NettyChannelBuilder.forAddress(m.host(), m.grpcPort(), GrpcTls.client(tls))
                    .directExecutor() // answers complete futures whose continuations are short
                    .maxInboundMessageSize(maxMessage)
                    .keepAliveTime(10, TimeUnit.SECONDS)
                    .keepAliveTimeout(5, TimeUnit.SECONDS)
                    .build();
            channel.getState(true); // connect now, not on the first request
            PeerChannel peer = new PeerChannel(m.id(), selfId, clusterId, channel);
            peers.add(new GrpcPeerReplica(peer, deadlines, config.requestTimeout(),
                    tuning.maxInFlightPerPeer(), Math.max(tuning.maxInFlightBytesPerPeer(), 4L * maxMessage)));
            peerRanges.put(m.id(), new GrpcRangeSource(peer, scheduler, config.requestTimeout()));
            antiEntropyPeers.add(new GrpcAntiEntropyPeer(peer, tuning.antiEntropyRoundDeadline()));
            probes.add(new GrpcPeerProbe(peer, tuning.pingTimeout()));
        }
    }

    @Override
    public List<AntiEntropyPeer> antiEntropyPeers() {
        return List.copyOf(antiEntropyPeers);
    }

    @Override
    public Map<String, Replica> replicas() {
        Map<String, Replica> byId = new HashMap<>();
        peers.forEach(p -> byId.put(p.nodeId(), p));
        return byId;
    }

    @Override
    public Map<String, RangeSource> ranges() {
        return Map.copyOf(peerRanges);
    }

    @Override
    public List<PeerProbe> probes() {
        return List.copyOf(probes);
    }

    @Override
    public void abandonStream(String peer) {
        peers.stream().filter(p -> p.nodeId().equals(peer)).forEach(GrpcPeerReplica::abandonStream);
    }

    @Override
    public void close() throws InterruptedException {
        if (server != null) {
            server.shutdown();
            if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
                server.shutdownNow(); // e.g. range scans for peers' clients: cancelled, they close their iterators
                server.awaitTermination(1, TimeUnit.SECONDS);
            }
        }
        peers.forEach(GrpcPeerReplica::close);
    }

    /**
     * Waits briefly for the server to terminate, so that cancelled range scans have closed their
     * storage iterators before the caller closes storage.
     */
    @Override
    public void kill() {
        if (server != null) {
            server.shutdownNow();
        }
        peers.forEach(GrpcPeerReplica::close);
        try {
            if (server != null) {
                server.awaitTermination(1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
