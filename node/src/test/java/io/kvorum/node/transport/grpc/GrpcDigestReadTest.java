package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.storage.StorageExpiredException;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.proto.ReadResult;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reads over {@code Replication.Exchange}: the replica's answer to a digest read carries the
 * version and a hash, never the value, a replica that predates digest reads still serves one, and
 * a replica whose storage did not read tells the coordinator why.
 */
@Timeout(30)
class GrpcDigestReadTest {

    private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);
    private static final int VALUE_BYTES = 64 * 1024;

    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    /** Every response the replica sent, as serialized. */
    private final List<ReplicaResponse> sent = new CopyOnWriteArrayList<>();
    private final Record stored = record();
    private Server server;
    private ManagedChannel channel;

    private static Record record() {
        byte[] value = new byte[VALUE_BYTES];
        new Random(1).nextBytes(value);
        return Record.value(42L << 16, "n3", value, Record.NEVER_EXPIRES);
    }

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
        timer.shutdownNow();
    }

    /** Serves {@code service} in process, recording each response it sends. */
    private GrpcPeerReplica peerServedBy(ReplicationGrpc.ReplicationImplBase service) throws Exception {
        ServerInterceptor recorder = new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                               ServerCallHandler<Q, A> next) {
                return next.startCall(new SimpleForwardingServerCall<>(call) {
                    @Override
                    public void sendMessage(A message) {
                        sent.add((ReplicaResponse) message);
                        super.sendMessage(message);
                    }
                }, headers);
            }
        };
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(ServerInterceptors.intercept(service, recorder)).build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        return new GrpcPeerReplica(new PeerChannel("n2", "n1", "cluster", channel), RequestTimer.of(timer),
                Duration.ofSeconds(10), 100, 64L << 20);
    }

    /** The replica side as a node runs it, over {@code local}, with room for far more than these tests send. */
    private static ReplicationService serving(Replica local) {
        return new ReplicationService(local, 1000, 64L << 20);
    }

    /** The replica side as a node runs it, over a replica that holds {@link #stored}. */
    private GrpcPeerReplica peer() throws Exception {
        return peerServedBy(serving(HoldingReplica.holding(stored)));
    }

    @Test
    void aDigestReadCarriesTheVersionAndHashButNotTheValue() throws Exception {
        RecordDigest digest = peer().readDigest(KEY).get(10, TimeUnit.SECONDS);

        assertThat(digest).isEqualTo(RecordDigest.of(stored));
        assertThat(sent).hasSize(1);
        ReadResult answer = sent.get(0).getRead();
        assertThat(answer.hasDigest()).isTrue();
        assertThat(answer.hasRecord()).as("a record in the answer to a digest read").isFalse();
        assertThat(sent.get(0).getSerializedSize()).as("bytes of the answer").isLessThan(100);
    }

    @Test
    void aFullReadStillCarriesTheValue() throws Exception {
        Record read = peer().read(KEY).get(10, TimeUnit.SECONDS);

        assertThat(read).isEqualTo(stored);
        assertThat(sent.get(0).getRead().hasDigest()).isFalse();
        assertThat(sent.get(0).getSerializedSize()).isGreaterThan(VALUE_BYTES);
    }

    @Test
    void aDigestOfNoVersionIsNull() throws Exception {
        GrpcPeerReplica peer = peerServedBy(serving(HoldingReplica.holding(null)));
        assertThat(peer.readDigest(KEY).get(10, TimeUnit.SECONDS)).isNull();
        assertThat(sent.get(0).getRead().hasDigest()).isFalse();
        assertThat(sent.get(0).getRead().hasRecord()).isFalse();
    }

    /** A replica that ignores digest_only (it predates the field) answers with the record: the digest is computed here. */
    @Test
    void aReplicaThatAnswersADigestReadWithTheRecordStillGivesItsDigest() throws Exception {
        GrpcPeerReplica peer = peerServedBy(new ReplicationGrpc.ReplicationImplBase() {
            @Override
            public StreamObserver<ReplicaRequest> exchange(StreamObserver<ReplicaResponse> responses) {
                return new StreamObserver<>() {
                    @Override
                    public void onNext(ReplicaRequest request) {
                        responses.onNext(ReplicaResponse.newBuilder().setCallId(request.getHeader().getCallId())
                                .setRead(ReadResult.newBuilder().setRecord(ReplicaProtoUtils.toRecordProto(stored)))
                                .build());
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        responses.onCompleted();
                    }
                };
            }
        });
        assertThat(peer.readDigest(KEY).get(10, TimeUnit.SECONDS)).isEqualTo(RecordDigest.of(stored));
    }

    @Test
    void aReadDroppedForWaitingPastTheTimeoutIsATimeoutToTheCoordinator() throws Exception {
        GrpcPeerReplica peer = peerServedBy(serving(
                new HoldingReplica(CompletableFuture.failedFuture(StorageExpiredException.read(1042)))));

        Throwable full = failureOf(peer.read(KEY));
        assertThat(full).isInstanceOf(ReplicaUnavailableException.class).hasMessageContaining("expired");
        assertThat(ReplicaUnavailableException.reasonOf(full)).isEqualTo(ReplicaUnavailableException.Reason.TIMED_OUT);
        Throwable digest = failureOf(peer.readDigest(KEY));
        assertThat(ReplicaUnavailableException.reasonOf(digest)).isEqualTo(ReplicaUnavailableException.Reason.TIMED_OUT);
    }

    @Test
    void aReadRefusedForOverloadIsAnOverloadToTheCoordinator() throws Exception {
        GrpcPeerReplica peer = peerServedBy(serving(new HoldingReplica(CompletableFuture.failedFuture(
                new StorageOverloadedException("storage reads are waiting 600 ms, over half of --request-timeout 1000 ms")))));

        assertThat(failureOf(peer.read(KEY))).isInstanceOf(OverloadedException.class)
                .hasMessageContaining("n2 is overloaded: storage reads are waiting 600 ms");
    }

    private static Throwable failureOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(10, TimeUnit.SECONDS);
            throw new AssertionError("not failed");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    /** This node's storage, as a replica whose every read of any key answers {@code reads}. */
    private record HoldingReplica(CompletableFuture<Record> reads) implements Replica {
        static HoldingReplica holding(Record record) {
            return new HoldingReplica(CompletableFuture.completedFuture(record));
        }

        @Override
        public String nodeId() {
            return "n2";
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            return reads;
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            return reads.thenApply(RecordDigest::of);
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record r) {
            throw new AssertionError("no writes here");
        }
    }
}
