package io.kvorum.node.transport.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.MembershipResponder;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.security.LiveTls;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.util.EventLoops;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The production {@link PeerTransport}: a gRPC server that serves this node's replica, range
 * scans, anti-entropy and liveness pings to its peers, and per peer one channel shared by a
 * {@link GrpcPeerReplica}, a {@link GrpcRangeSource}, a {@link GrpcAntiEntropyPeer}, a
 * {@link GrpcMembershipPeer}, a {@link GrpcBackupPeer} and the reconnections of a
 * {@link GrpcPeerProbe}, plus one channel for that probe's heartbeats alone
 * ({@link #heartbeatChannel}). A channel starts connecting when its peer is
 * {@link #connect connected}. Its limits and deadlines are {@link Tuning.Grpc}.
 */
public final class GrpcTransport implements PeerTransport {

    /** See {@link #maxCallsPerConnection}. */
    private static final int CALLS_BESIDES_RANGES = 1024;

    /** The production transport, for {@code KvorumNode}. */
    public static final Factory FACTORY = GrpcTransport::new;

    private final NodeConfig config;
    private final ScheduledExecutorService scheduler;
    private final EventLoops loops;
    private final RequestTimer deadlines;
    private Server server;
    private LocalIdentity identity;
    private MembershipResponder membership;
    private LiveTls tls;
    private final Map<String, Connected> peers = new ConcurrentHashMap<>();

    /** One peer's channels (data, heartbeats) and the replica client that owns its stream. */
    private record Connected(ManagedChannel channel, ManagedChannel heartbeatChannel, GrpcPeerReplica replica) {
        void close() {
            replica.close();
            channel.shutdownNow();
            heartbeatChannel.shutdownNow();
        }

        /** Fails the replica calls still waiting and closes the heartbeat channel (the replica closes its own). */
        void closeForStop() {
            replica.close();
            heartbeatChannel.shutdownNow();
        }
    }

    /**
     * @param scheduler runs the per-batch timeouts of range scans
     * @param deadlines runs the per-call deadlines of replica requests
     */
    private GrpcTransport(NodeConfig config, ScheduledExecutorService scheduler, RequestTimer deadlines, EventLoops loops) {
        this.config = config;
        this.loops = loops;
        this.scheduler = scheduler;
        this.deadlines = deadlines;
    }

    /** Binds this node's gRPC port (of its {@code --cluster} entry). */
    @Override
    public void start(LocalServices local) throws IOException {
        identity = LocalIdentity.of(local.membership());
        membership = local.membership();
        Tuning.Grpc tuning = config.tuning().grpc();
        tls = config.security().tls(); // with TLS: mutual, a peer without a certificate of the CA is refused
        server = NettyServerBuilder.forAddress(new InetSocketAddress(config.bindAddress(), config.self().grpcPort()),
                        GrpcTls.server(tls))
                .addService(new ReplicationService(local.replica(), tuning.maxInFlightPerPeer(),
                        Math.max(tuning.unsentAnswerBytes(), 4L * maxMessage())))
                .addService(new LivenessService(local.pings()))
                .addService(new RangeService(local.range(), tuning.rangeMessageBytes()))
                .addService(new AntiEntropyGrpcService(local.antiEntropy()))
                .addService(new MembershipGrpcService(local.membership()))
                .addService(new BackupGrpcService(local.backup()))
                .intercept(new ClusterCheck(new ForeignClusterLog(identity::clusterId), local.membership(), tls != null))
                .bossEventLoopGroup(loops.acceptor())
                .workerEventLoopGroup(loops.io())
                .channelType(loops.serverChannel())
                .directExecutor() // handlers only enqueue storage work; they never block
                .maxInboundMessageSize(maxMessage())
                .maxConcurrentCallsPerConnection(maxCallsPerConnection(config.maxConnections()))
                // No maximum connection age: it would cut the long-lived streams
                // (docs/architecture.md#limits-of-the-peer-port).
                .addTransportFilter(new ConnectionsPerAddress(tuning.connectionsPerAddress()))
                .maxConnectionIdle(tuning.connectionIdle().toMillis(), TimeUnit.MILLISECONDS)
                .permitKeepAliveTime(5, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .build()
                .start();
    }

    /**
     * Calls one connection may hold open at once (HTTP/2's {@code SETTINGS_MAX_CONCURRENT_STREAMS}):
     * a peer opens one range scan per client connection it serves a range on, plus a few long-lived
     * streams (replication, an anti-entropy round) and unary calls; {@value #CALLS_BESIDES_RANGES}
     * leaves room for those many times over. gRPC clients queue calls past it until one ends; a
     * client that ignores it has its streams refused. Without it, calls that never send a message
     * would each hold server state for as long as the connection lives.
     */
    static int maxCallsPerConnection(int maxClientConnections) {
        return (int) Math.min(Integer.MAX_VALUE, (long) maxClientConnections + CALLS_BESIDES_RANGES);
    }

    private int maxMessage() {
        return config.maxValueBytes() + config.tuning().grpc().messageOverheadBytes();
    }

    @Override
    public Peer connect(ClusterMember m) {
        Tuning.Grpc tuning = config.tuning().grpc();
        int maxMessage = maxMessage();
        ManagedChannel channel = NettyChannelBuilder.forAddress(m.host(), m.grpcPort(), GrpcTls.client(tls, m.id()))
                .eventLoopGroup(loops.io())
                .channelType(loops.clientChannel())
                .directExecutor() // answers complete futures whose continuations are short
                .intercept(new NotAMemberRefusals(m.id(), membership))
                .maxInboundMessageSize(maxMessage)
                .keepAliveTime(10, TimeUnit.SECONDS)
                .keepAliveTimeout(5, TimeUnit.SECONDS)
                .build();
        channel.getState(true); // connect now, not on the first request
        ManagedChannel heartbeatChannel = heartbeatChannel(m);
        PeerChannel peer = new PeerChannel(m.id(), config.self().id(), identity, channel);
        GrpcPeerReplica replica = new GrpcPeerReplica(peer, deadlines, config.requestTimeout(),
                tuning.maxInFlightPerPeer(), Math.max(tuning.maxInFlightBytesPerPeer(), 4L * maxMessage));
        Connected previous = peers.put(m.id(), new Connected(channel, heartbeatChannel, replica));
        if (previous != null) {
            previous.close();
        }
        return new Peer(m.id(), replica, new GrpcRangeSource(peer, scheduler, config.requestTimeout()),
                new GrpcAntiEntropyPeer(peer, tuning.antiEntropyRoundDeadline()),
                new GrpcPeerProbe(peer, new PeerChannel(m.id(), config.self().id(), identity, heartbeatChannel),
                        tuning.pingTimeout()),
                new GrpcMembershipPeer(peer, config.tuning().changes().proposalTimeout(),
                        config.tuning().changes().changeDeadline()),
                new GrpcBackupPeer(peer, config.tuning().changes().proposalTimeout()));
    }

    /**
     * The channel that carries heartbeats to a peer, and nothing else. On the data channel a
     * heartbeat queued behind the data traffic, and under load it missed its deadline while the
     * peer was answering requests:
     * <ul>
     *   <li>on the wire, behind the replication stream's messages: in the channel's outbound
     *       buffer and the socket (one TCP connection delivers in order), and behind HTTP/2's
     *       connection flow-control window, which messages the peer has received but not yet
     *       consumed keep closed (its replica service reads a stream only as fast as its storage
     *       takes requests);</li>
     *   <li>on this node, on the shared I/O loops, which read the data connections' answers and
     *       run the HTTP gateway: a heartbeat's answer was read when the loop came to it.</li>
     * </ul>
     * Its own connection, served by its own loop ({@link EventLoops#liveness}), avoids both. On
     * the peer, that connection is read by one of its shared loops, which answers the ping at once
     * ({@code LivenessService}, direct executor): only that loop's current pass is in the way, no
     * storage queue and no flow-control window. It needs no keepalive: heartbeats use it every
     * second, and a failed one is reconnected by the next {@code RECONNECT} ping.
     */
    private ManagedChannel heartbeatChannel(ClusterMember m) {
        ManagedChannel channel = NettyChannelBuilder.forAddress(m.host(), m.grpcPort(), GrpcTls.client(tls, m.id()))
                .eventLoopGroup(loops.liveness())
                .channelType(loops.clientChannel())
                .directExecutor() // an answer only records the peer's liveness, briefly
                .intercept(new NotAMemberRefusals(m.id(), membership))
                .build();
        channel.getState(true);
        return channel;
    }

    @Override
    public void disconnect(String peer) {
        Connected c = peers.remove(peer);
        if (c != null) {
            c.close();
        }
    }

    @Override
    public void abandonStream(String peer) {
        Connected c = peers.get(peer);
        if (c != null) {
            c.replica().abandonStream();
        }
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
        peers.values().forEach(Connected::closeForStop);
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
        peers.values().forEach(Connected::closeForStop);
        try {
            if (server != null) {
                server.awaitTermination(1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
