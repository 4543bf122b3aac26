package io.kvorum.node.transport.memory;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.backup.BackupPart;
import io.kvorum.node.backup.BackupParticipant;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChange;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.MembershipPeer;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.coordinator.JoinSelection;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.coordinator.ReplicaUnavailableException.Reason;
import io.kvorum.node.liveness.PeerProbe;
import io.kvorum.node.liveness.PingListener;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.transport.PeerTransport;
import io.kvorum.node.util.Failures;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One node's {@link PeerTransport} on a {@link SimulatedNetwork}. Requests and answers are core
 * objects handed across in memory (no serialization), each crossing its directed link. Deadlines
 * are the same as over gRPC: the request timeout per replica call and per range batch, one second
 * per ping (two for an announcement).
 */
final class SimulatedTransport implements PeerTransport {

    private static final Duration PING_TIMEOUT = Duration.ofSeconds(1);
    /** Range scans this JVM's simulated nodes serve to peers right now, as {@code RangeService.activeScans}. */
    static final java.util.concurrent.atomic.AtomicInteger ACTIVE_SCANS = new java.util.concurrent.atomic.AtomicInteger();

    private final SimulatedNetwork network;
    private final NodeConfig config;
    private final String selfId;
    private final String address;
    private final RequestTimer deadlines;
    private final Map<String, Set<CompletableFuture<?>>> pendingByPeer = new ConcurrentHashMap<>();
    private volatile LocalServices local;

    SimulatedTransport(SimulatedNetwork network, NodeConfig config,
                       ScheduledExecutorService scheduler, RequestTimer deadlines) {
        this.network = network;
        this.config = config;
        this.selfId = config.self().id();
        this.address = addressOf(config.self());
        this.deadlines = deadlines;
    }

    static String addressOf(ClusterMember m) {
        return m.host() + ":" + m.grpcPort();
    }

    String selfId() {
        return selfId;
    }

    /** This node's cluster identity as it is now (a joining node learns it). */
    String clusterId() {
        return local.membership().membership().identity();
    }

    private String clusterName() {
        return local.membership().membership().clusterName();
    }

    private long epoch() {
        return local.membership().membership().epoch();
    }

    LocalServices local() {
        return local;
    }

    /** Whether a request of cluster {@code senderCluster} is served here. */
    boolean accepts(String senderCluster) {
        return clusterId().equals(senderCluster);
    }

    @Override
    public void start(LocalServices services) throws IOException {
        this.local = services;
        network.register(address, this);
    }

    @Override
    public Peer connect(ClusterMember m) {
        RangeSource range = new RangeSource() {
            @Override
            public EntryStream open(byte[] start, byte[] end) {
                return new SimRangeStream(m, start, end, null);
            }

            @Override
            public EntryStream open(byte[] start, byte[] end, JoinSelection selection) {
                return new SimRangeStream(m, start, end, selection);
            }
        };
        return new Peer(m.id(), new SimReplica(m), range,
                new SimulatedAntiEntropyPeer(network, this, m), new SimProbe(m), new SimMembershipPeer(m),
                new SimBackupPeer(m));
    }

    @Override
    public void disconnect(String peer) {
        failPending(peer, peer + " is no longer a member");
    }

    @Override
    public void abandonStream(String peer) {
        failPending(peer, "the calls to " + peer + " were abandoned: the peer is down");
    }

    @Override
    public void close() {
        network.unregister(address, this);
        pendingByPeer.keySet().forEach(peer -> failPending(peer, "the node is shutting down"));
    }

    @Override
    public void kill() {
        close();
    }

    private void failPending(String peer, String why) {
        Set<CompletableFuture<?>> calls = pendingByPeer.get(peer);
        if (calls != null) {
            for (CompletableFuture<?> call : List.copyOf(calls)) {
                call.completeExceptionally(new ReplicaUnavailableException(Reason.UNREACHABLE, why));
            }
        }
    }

    /**
     * One request to {@code peer}: {@code op} runs on the peer's services at delivery, and its
     * answer crosses back. Fails at once when nothing listens at the peer's address, with
     * {@code TIMED_OUT} after {@code timeout} when a message is lost or late.
     */
    <T> CompletableFuture<T> call(ClusterMember peer, SimulatedNetwork.Kind kind, Duration timeout,
                                  Function<SimulatedTransport, CompletableFuture<T>> op) {
        return call(peer, kind, timeout, false, false, op);
    }

    /**
     * @param join a new node's request to join, which names the cluster by its name alone, as it
     *             does not know the identity yet (as {@code ClusterCheck} allows over gRPC)
     * @param fromFormerMember a request that a node that is no longer a member may still send
     *             ({@link MembershipChange#mayComeFromFormerMember}, as {@code ClusterCheck} allows)
     */
    private <T> CompletableFuture<T> call(ClusterMember peer, SimulatedNetwork.Kind kind, Duration timeout, boolean join,
                                          boolean fromFormerMember,
                                          Function<SimulatedTransport, CompletableFuture<T>> op) {
        return call(peer, kind, timeout, join, fromFormerMember, false, op);
    }

    /**
     * @param proposal a membership proposal, which a new node that is not a member yet accepts by
     *                 the cluster's name alone (the first epoch of its own join), as {@code ClusterCheck} does
     */
    private <T> CompletableFuture<T> call(ClusterMember peer, SimulatedNetwork.Kind kind, Duration timeout, boolean join,
                                          boolean fromFormerMember, boolean proposal,
                                          Function<SimulatedTransport, CompletableFuture<T>> op) {
        // A change's answer is a CHANGE too, so that a test can lose exactly that answer.
        SimulatedNetwork.Kind answerKind = kind == SimulatedNetwork.Kind.CHANGE ? kind : SimulatedNetwork.Kind.ANSWER;
        String senderCluster = clusterId();
        String senderName = clusterName();
        long senderEpoch = epoch();
        CompletableFuture<T> result = new CompletableFuture<>();
        SimulatedTransport target = network.endpoint(addressOf(peer));
        if (target == null || network.endpoint(address) != this) {
            result.completeExceptionally(new ReplicaUnavailableException(Reason.UNREACHABLE,
                    peer.id() + " is unreachable (nothing listens at " + addressOf(peer) + ")"));
            return result;
        }
        Set<CompletableFuture<?>> pending = pendingByPeer.computeIfAbsent(peer.id(), p -> ConcurrentHashMap.newKeySet());
        pending.add(result);
        RequestTimer.Timeout timer = deadlines.schedule(() -> result.completeExceptionally(new ReplicaUnavailableException(
                Reason.TIMED_OUT, peer.id() + " did not answer within " + timeout.toMillis() + " ms")),
                timeout.toNanos(), TimeUnit.NANOSECONDS);
        result.whenComplete((v, e) -> {
            timer.cancel();
            pending.remove(result);
        });
        network.send(selfId, peer.id(), kind, () -> {
            if (network.endpoint(addressOf(peer)) != target) {
                return; // the peer died in flight: the request is lost
            }
            boolean byName = join || proposal && !target.local().membership().isMember();
            if (byName ? !target.clusterName().equals(senderName) : !target.accepts(senderCluster)) {
                network.send(peer.id(), selfId, answerKind, () -> result.completeExceptionally(new ReplicaUnavailableException(
                        peer.id() + " refused us: it belongs to another cluster")));
                return;
            }
            if (!byName && !target.local().membership().isMember()) {
                network.send(peer.id(), selfId, answerKind, () -> result.completeExceptionally(
                        new ReplicaUnavailableException(Reason.UNREACHABLE, peer.id() + " is joining and does not serve yet")));
                return;
            }
            if (!byName && !fromFormerMember && target.local().membership().membership().topology().member(selfId) == null) {
                // As over gRPC (NotAMemberRefusals): the refusal carries the epoch that no longer has us.
                long theirEpoch = target.epoch();
                network.send(peer.id(), selfId, answerKind, () -> {
                    local.membership().sawEpoch(peer.id(), theirEpoch);
                    result.completeExceptionally(new ReplicaUnavailableException(peer.id() + " refused us: we are not a member"));
                });
                return;
            }
            if (!byName || join) { // as over gRPC: a new node's own join proposal moves nothing else
                target.local().membership().sawEpoch(selfId, senderEpoch);
            }
            CompletableFuture<T> answer;
            try {
                answer = op.apply(target);
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            answer.whenComplete((value, error) -> network.send(peer.id(), selfId, answerKind, () -> {
                if (error != null) {
                    result.completeExceptionally(error);
                } else {
                    result.complete(value);
                }
            }));
        });
        return result;
    }

    /** A peer's replica, reached through the network. */
    private final class SimReplica implements Replica {
        private final ClusterMember peer;

        SimReplica(ClusterMember peer) {
            this.peer = peer;
        }

        @Override
        public String nodeId() {
            return peer.id();
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            return call(peer, SimulatedNetwork.Kind.READ, config.requestTimeout(), t -> t.local().replica().read(key));
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            return call(peer, SimulatedNetwork.Kind.READ, config.requestTimeout(),
                    t -> t.local().replica().readDigest(key));
        }

        /** As the gRPC replication service: a record from a peer passes the clock bound (docs/operations.md#clocks). */
        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            return call(peer, SimulatedNetwork.Kind.WRITE, config.requestTimeout(),
                    t -> t.local().replica().writeFromPeer(key, record));
        }
    }

    /** A peer's membership service, reached through the network. */
    private final class SimMembershipPeer implements MembershipPeer {
        private final ClusterMember peer;

        SimMembershipPeer(ClusterMember peer) {
            this.peer = peer;
        }

        @Override
        public CompletableFuture<Membership> fetch() {
            // A node that is no longer a member may ask too, as over gRPC (ClusterCheck): that is how it learns it.
            return unavailableOnFailure(call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT.multipliedBy(3), false, true,
                    t -> CompletableFuture.completedFuture(t.local().membership().membership())));
        }

        @Override
        public CompletableFuture<Void> propose(Membership next) {
            return unavailableOnFailure(call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT.multipliedBy(3), false, false,
                    true, t -> t.local().membership().adoptProposal(selfId, next)));
        }

        @Override
        public CompletableFuture<Membership> change(MembershipChange change) {
            return unavailableOnFailure(call(peer, SimulatedNetwork.Kind.CHANGE, config.tuning().changes().changeDeadline(),
                    change.kind() == MembershipChange.Kind.JOIN, change.mayComeFromFormerMember(selfId),
                    t -> t.local().membership().changeFrom(selfId, change)));
        }

        /** As over gRPC: a refused change stays what it is; anything else means the peer was not reached. */
        private <T> CompletableFuture<T> unavailableOnFailure(CompletableFuture<T> call) {
            return call.handle((value, error) -> {
                if (error == null) {
                    return CompletableFuture.completedFuture(value);
                }
                Throwable t = Failures.unwrap(error);
                return CompletableFuture.<T>failedFuture(t instanceof MembershipChangeException ? t
                        : new MembershipChangeException(MembershipChangeException.Reason.UNAVAILABLE,
                                peer.id() + " is unreachable (" + t.getMessage() + ")"));
            }).thenCompose(f -> f);
        }
    }

    /** A peer's backup side, reached through the network; its refusals cross as they are, as over gRPC. */
    private final class SimBackupPeer implements BackupParticipant {
        private final ClusterMember peer;

        SimBackupPeer(ClusterMember peer) {
            this.peer = peer;
        }

        @Override
        public CompletableFuture<Void> prepare(String id, List<String> members) {
            return call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT.multipliedBy(3), t -> t.local().backup().prepare(id, members));
        }

        @Override
        public CompletableFuture<Void> start(String id) {
            return call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT.multipliedBy(3), t -> t.local().backup().start(id));
        }

        @Override
        public CompletableFuture<Void> cancel(String id, String reason) {
            return call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT.multipliedBy(3), t -> t.local().backup().cancel(id, reason));
        }

        @Override
        public CompletableFuture<List<BackupPart>> parts() {
            return call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT.multipliedBy(3), t -> t.local().backup().parts());
        }
    }

    /** A peer's liveness: its ping listener, reached through the network. */
    private final class SimProbe implements PeerProbe {
        private final ClusterMember peer;

        SimProbe(ClusterMember peer) {
            this.peer = peer;
        }

        @Override
        public String nodeId() {
            return peer.id();
        }

        @Override
        public CompletableFuture<Pong> ping(Kind kind, String incarnation) {
            if (kind == Kind.ANNOUNCE) {
                return call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT.multipliedBy(2), t -> {
                    PingListener pings = t.local().pings();
                    String remembered = pings.incarnationSeen(selfId, incarnation);
                    return pings.announced(selfId).thenApply(ignored -> new Pong(pings.wallClockMillis(), remembered));
                });
            }
            return call(peer, SimulatedNetwork.Kind.PING, PING_TIMEOUT, t -> {
                PingListener pings = t.local().pings();
                String remembered = pings.incarnationSeen(selfId, incarnation);
                pings.pinged(selfId);
                return CompletableFuture.completedFuture(new Pong(pings.wallClockMillis(), remembered));
            });
        }
    }

    /**
     * A peer's raw entries of a range: the peer's stream is opened at the first batch and each
     * batch is one request through the network, with its own timeout.
     */
    private final class SimRangeStream implements EntryStream {
        private final ClusterMember peer;
        private final byte[] start;
        private final byte[] end;
        /** Applied by the peer, as over gRPC; null for every entry. */
        private final JoinSelection selection;
        private volatile EntryStream remote;
        private volatile boolean closed;
        private final java.util.concurrent.atomic.AtomicBoolean served = new java.util.concurrent.atomic.AtomicBoolean();

        SimRangeStream(ClusterMember peer, byte[] start, byte[] end, JoinSelection selection) {
            this.peer = peer;
            this.start = start;
            this.end = end;
            this.selection = selection;
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            return call(peer, SimulatedNetwork.Kind.RANGE, config.requestTimeout(), t -> {
                EntryStream s = remote;
                if (s == null) {
                    s = t.local().range().open(start, end, selection);
                    remote = s;
                    served.set(true);
                    ACTIVE_SCANS.incrementAndGet();
                }
                if (closed) {
                    endScan();
                    return CompletableFuture.failedFuture(new ReplicaUnavailableException("the range was closed"));
                }
                return s.next().whenComplete((batch, error) -> {
                    if (error != null || batch.isEmpty()) {
                        endScan(); // the end of the range, or a failure: the scan is over
                    }
                });
            });
        }

        @Override
        public void close() {
            closed = true;
            endScan();
        }

        private void endScan() {
            EntryStream s = remote;
            if (s != null) {
                s.close();
            }
            if (served.compareAndSet(true, false)) {
                ACTIVE_SCANS.decrementAndGet();
            }
        }
    }
}
