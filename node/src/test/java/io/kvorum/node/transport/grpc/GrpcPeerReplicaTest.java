package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import io.kvorum.proto.WriteResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The per-peer bounds of {@link GrpcPeerReplica}, against an in-process replica that never answers. */
@Timeout(30)
class GrpcPeerReplicaTest {

    private static final int MIB = 1 << 20;

    private final AtomicInteger received = new AtomicInteger();
    /** What the replica received, and where it could answer: tests answer by hand, if at all. */
    private final List<ReplicaRequest> requests = new CopyOnWriteArrayList<>();
    private volatile StreamObserver<ReplicaResponse> answers;
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void startSilentReplica() throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new ReplicationGrpc.ReplicationImplBase() {
                    @Override
                    public StreamObserver<ReplicaRequest> exchange(StreamObserver<ReplicaResponse> responses) {
                        answers = responses;
                        return new StreamObserver<>() {
                            @Override
                            public void onNext(ReplicaRequest request) {
                                requests.add(request);
                                received.incrementAndGet(); // and never answer by itself
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                            }
                        };
                    }
                }).build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().maxInboundMessageSize(16 * MIB).build();
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.shutdownNow();
        timer.shutdownNow();
    }

    private GrpcPeerReplica peer(Duration timeout, int maxCalls, long maxBytes) {
        return new GrpcPeerReplica(new PeerChannel("n2", "n1", "cluster", channel), RequestTimer.of(timer), timeout, maxCalls, maxBytes);
    }

    private static Record value(int bytes) {
        return Record.value(1L << 16, "n1", new byte[bytes], Record.NEVER_EXPIRES);
    }

    private static Throwable failureOf(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(10, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("call neither completed nor failed", e);
        }
    }

    @Test
    void bytesInFlightAreBoundedAndARefusedCallIsNeverSent() throws Exception {
        GrpcPeerReplica peer = peer(Duration.ofSeconds(20), 1000, 3L * MIB);
        CompletableFuture<Boolean> w1 = peer.write("a".getBytes(), value(MIB));
        CompletableFuture<Boolean> w2 = peer.write("b".getBytes(), value(MIB));
        // 2 MiB and a little are in flight; a third MiB would pass the 3 MiB budget.
        CompletableFuture<Boolean> w3 = peer.write("c".getBytes(), value(MIB));

        assertThat(failureOf(w3)).isInstanceOf(OverloadedException.class);
        assertThat(w1).isNotDone();
        assertThat(w2).isNotDone();
        // Small requests still fit in what is left.
        CompletableFuture<Record> small = peer.read("d".getBytes());
        assertThat(small).isNotDone();
        await().atMost(Duration.ofSeconds(5)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                .pollInSameThread()
                .untilAsserted(() -> assertThat(received.get()).as("requests the replica received").isGreaterThanOrEqualTo(3));
        assertThat(received.get()).isEqualTo(3); // w1, w2 and the read; never w3
    }

    @Test
    void callsInFlightAreBoundedAndFreedByTheirTimeouts() throws Exception {
        GrpcPeerReplica peer = peer(Duration.ofMillis(200), 2, 64L * MIB);
        CompletableFuture<Record> r1 = peer.read("a".getBytes());
        CompletableFuture<Record> r2 = peer.read("b".getBytes());
        // Two calls await answers: a third is refused at once.
        assertThat(failureOf(peer.read("c".getBytes()))).isInstanceOf(OverloadedException.class);
        // The silent replica never answers: each call ends by its own timer, not a stream deadline.
        assertThat(failureOf(r1)).isInstanceOf(ReplicaUnavailableException.class);
        assertThat(failureOf(r2)).isInstanceOf(ReplicaUnavailableException.class);
        // Their permits are back: a new call is sent (and times out like the others).
        assertThat(failureOf(peer.read("d".getBytes()))).isInstanceOf(ReplicaUnavailableException.class);
    }

    @Test
    void aWriteThatTimedOutIsStillAwaitedAndReportsItsLateAnswer() throws Exception {
        GrpcPeerReplica peer = peer(Duration.ofMillis(200), 1, 64L * MIB);
        CompletableFuture<Boolean> write = peer.write("a".getBytes(), value(10));

        Throwable timedOut = failureOf(write);
        assertThat(timedOut).isInstanceOf(ReplicaUnavailableException.class);
        CompletableFuture<Void> lateAnswer = ReplicaUnavailableException.lateAnswerOf(timedOut);
        assertThat(lateAnswer).as("still awaited").isNotNull().isNotDone();
        // Its message is still in flight, and so is its permit.
        assertThat(failureOf(peer.read("b".getBytes()))).isInstanceOf(OverloadedException.class);

        long callId = requests.get(0).getHeader().getCallId();
        answers.onNext(ReplicaResponse.newBuilder().setCallId(callId)
                .setWrite(WriteResult.newBuilder().setApplied(true)).build());
        lateAnswer.get(10, TimeUnit.SECONDS); // the replica took it: completes normally
        assertThat(failureOf(peer.read("c".getBytes()))).as("the permit is back; the read times out")
                .isInstanceOf(ReplicaUnavailableException.class);
    }

    @Test
    void aWriteNeverAnsweredFailsItsLateAnswerAfterAnotherTimeout() throws Exception {
        GrpcPeerReplica peer = peer(Duration.ofMillis(200), 1, 64L * MIB);
        Throwable timedOut = failureOf(peer.write("a".getBytes(), value(10)));
        CompletableFuture<Void> lateAnswer = ReplicaUnavailableException.lateAnswerOf(timedOut);

        assertThat(failureOf(lateAnswer)).isInstanceOf(ReplicaUnavailableException.class)
                .hasMessageContaining("twice the request timeout");
        assertThat(ReplicaUnavailableException.lateAnswerOf(failureOf(peer.read("b".getBytes()))))
                .as("a read is not awaited past its timeout").isNull();
    }
}
