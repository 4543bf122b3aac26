package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.proto.ReadRequest;
import io.kvorum.proto.ReplicaError;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import io.kvorum.proto.RequestHeader;
import io.kvorum.proto.WriteRequest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/architecture.md#limits-of-the-peer-port: a peer that sends reads of a large value on
 * {@code Replication.Exchange} and never reads the answers leaves the node's memory bounded. A raw
 * gRPC client over a real (Netty, loopback) connection asks for no answer at all, so that only
 * HTTP/2 flow control and the service's own bounds stand between it and the node's memory; the
 * bounds are asserted by counts: requests the replica was handed, answers held unsent.
 */
@Timeout(60)
class ReplicationBackpressureTest {

    private static final int VALUE_BYTES = 64 * 1024;
    /** The client's HTTP/2 window: fixed (no window growth), so that what the node can push is known. */
    private static final int CLIENT_WINDOW = 64 * 1024;
    private static final Record LARGE = Record.value(1L << 16, "n2", new byte[VALUE_BYTES], Record.NEVER_EXPIRES);

    private final AtomicInteger reads = new AtomicInteger();
    private final AtomicInteger writes = new AtomicInteger();
    private final List<ReplicaResponse> answers = new CopyOnWriteArrayList<>();
    private final AtomicReference<Status> closed = new AtomicReference<>();
    private Server server;
    private ManagedChannel channel;
    private ReplicationService service;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static ConditionFactory within(Duration d) {
        return await().atMost(d).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }

    /** A node's replication service over a replica that holds {@link #LARGE} under every key and counts what it is handed. */
    private void serve(int window, long budgetBytes) throws Exception {
        service = new ReplicationService(new CountingReplica(), window, budgetBytes);
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(service).directExecutor().build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext()
                .flowControlWindow(CLIENT_WINDOW).maxInboundMessageSize(4 << 20).directExecutor().build();
    }

    /** An Exchange call that asks for no answer until the test says so. */
    private ClientCall<ReplicaRequest, ReplicaResponse> openExchange() {
        ClientCall<ReplicaRequest, ReplicaResponse> call =
                channel.newCall(ReplicationGrpc.getExchangeMethod(), CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(ReplicaResponse message) {
                answers.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.set(status);
            }
        }, new Metadata());
        return call;
    }

    private static RequestHeader header(long callId) {
        return RequestHeader.newBuilder().setClusterId("cluster").setSender("n1").setCallId(callId)
                .setTimeoutMillis(10_000).build();
    }

    private static ReplicaRequest read(long callId) {
        return ReplicaRequest.newBuilder().setHeader(header(callId))
                .setRead(ReadRequest.newBuilder().setKey(ByteString.copyFromUtf8("k" + callId))).build();
    }

    private static ReplicaRequest write(long callId) {
        return ReplicaRequest.newBuilder().setHeader(header(callId)).setWrite(WriteRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8("w" + callId))
                .setRecord(ReplicaProtoUtils.toRecordProto(Record.value(2L << 16, "n1", new byte[8], Record.NEVER_EXPIRES))))
                .build();
    }

    @Test
    void aPeerThatNeverReadsItsAnswersStopsBeingReadFrom() throws Exception {
        int window = 32;
        int sent = 2000; // 125 MiB of answers, were they all buffered
        serve(window, 1L << 30); // a budget that never binds: the window alone must hold the node back
        ClientCall<ReplicaRequest, ReplicaResponse> call = openExchange();
        for (int i = 1; i <= sent; i++) {
            call.sendMessage(read(i));
        }

        within(Duration.ofSeconds(20)).until(() -> reads.get() >= window);
        // A window of requests, and the few answers the client's own HTTP/2 window took in.
        int bound = window + CLIENT_WINDOW / VALUE_BYTES + 4;
        within(Duration.ofSeconds(5)).during(Duration.ofSeconds(1)).until(() -> reads.get() <= bound);
        assertThat(service.heldBytes()).as("bytes of answers held unsent")
                .isLessThanOrEqualTo((long) (bound + 1) * (VALUE_BYTES + 64));
        assertThat(answers).isEmpty();

        // Once the peer reads, every request is answered, each with its record.
        call.request(Integer.MAX_VALUE);
        within(Duration.ofSeconds(30)).until(() -> answers.size() == sent);
        assertThat(answers).allSatisfy(a -> assertThat(a.getRead().hasRecord()).isTrue());
        assertThat(answers.stream().map(ReplicaResponse::getCallId).distinct()).hasSize(sent);
        assertThat(reads.get()).isEqualTo(sent);

        call.halfClose();
        within(Duration.ofSeconds(10)).until(() -> closed.get() != null);
        assertThat(closed.get().isOk()).as("the stream ends once every answer is sent: %s", closed.get()).isTrue();
        within(Duration.ofSeconds(5)).until(() -> service.heldBytes() == 0);
    }

    @Test
    void readsPastTheBudgetAreAnsweredOverloadedAndWritesKeepTheirAnswer() throws Exception {
        long budget = 16L * (VALUE_BYTES + 1024); // a stream may hold half: 8 answers
        int sentReads = 200;
        int sentWrites = 5;
        serve(4096, budget);
        ClientCall<ReplicaRequest, ReplicaResponse> call = openExchange();
        for (int i = 1; i <= sentReads; i++) {
            call.sendMessage(read(i));
        }
        for (int i = 1; i <= sentWrites; i++) {
            call.sendMessage(write(sentReads + i));
        }

        within(Duration.ofSeconds(20)).until(() -> reads.get() == sentReads && writes.get() == sentWrites);
        assertThat(service.heldBytes()).as("bytes of answers held unsent, past the window the client took in")
                .isLessThanOrEqualTo(budget / 2 + (sentReads + sentWrites) * 64L);

        call.request(Integer.MAX_VALUE);
        within(Duration.ofSeconds(20)).until(() -> answers.size() == sentReads + sentWrites);
        long records = answers.stream().filter(a -> a.hasRead() && a.getRead().hasRecord()).count();
        long overloaded = answers.stream()
                .filter(a -> a.hasError() && a.getError().getCode() == ReplicaError.Code.OVERLOADED).count();
        assertThat(records).as("reads answered with their record").isBetween(8L, 8L + CLIENT_WINDOW / VALUE_BYTES + 2);
        assertThat(records + overloaded).isEqualTo(sentReads);
        assertThat(answers.stream().filter(ReplicaResponse::hasWrite).count()).as("writes answered as applied")
                .isEqualTo(sentWrites);
        call.cancel("done", null);
        within(Duration.ofSeconds(5)).until(() -> service.heldBytes() == 0);
    }

    /** Holds {@link #LARGE} under every key, answers at once, and counts what it is handed. */
    private final class CountingReplica implements Replica {
        @Override
        public String nodeId() {
            return "n2";
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            reads.incrementAndGet();
            return CompletableFuture.completedFuture(LARGE);
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            reads.incrementAndGet();
            return CompletableFuture.completedFuture(RecordDigest.of(LARGE));
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            writes.incrementAndGet();
            return CompletableFuture.completedFuture(true);
        }
    }
}
