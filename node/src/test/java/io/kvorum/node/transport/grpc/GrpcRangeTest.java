package io.kvorum.node.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.TestNode;
import io.kvorum.node.coordinator.JoinSelection;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.proto.RangeScanBatch;
import io.kvorum.proto.RangeScanGrpc;
import io.kvorum.proto.RangeScanRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code RangeScan.Scan} end to end without sockets: {@link RangeService} over an in-memory stream,
 * read by {@link GrpcRangeSource} through an in-process channel. The in-process transport is ready
 * for exactly as many messages as the client requested, which makes flow control deterministic.
 */
@Timeout(30)
class GrpcRangeTest {

    private static final String CLUSTER = "cluster-a";
    private static final Duration PATIENT = Duration.ofSeconds(20);

    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void stop() {
        channels.forEach(ManagedChannel::shutdownNow);
        servers.forEach(Server::shutdownNow);
        timer.shutdownNow();
    }

    /** A node's stored entries in scripted batches; counts reads and closes. */
    static final class ScriptedStream implements EntryStream {
        final List<Object> script;
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();

        ScriptedStream(List<Object> script) {
            this.script = script;
        }

        @Override
        @SuppressWarnings("unchecked")
        public CompletableFuture<List<Entry>> next() {
            int i = reads.getAndIncrement();
            Object step = i < script.size() ? script.get(i) : List.of();
            return step instanceof RuntimeException e ? CompletableFuture.failedFuture(e)
                    : CompletableFuture.completedFuture((List<Entry>) step);
        }

        @Override
        public void close() {
            closes.incrementAndGet();
        }
    }

    private ManagedChannel channelTo(io.grpc.BindableService service) throws Exception {
        String name = InProcessServerBuilder.generateName();
        servers.add(InProcessServerBuilder.forName(name).directExecutor().addService(service)
                .intercept(new ClusterCheck(new ForeignClusterLog(CLUSTER))).build().start());
        ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        channels.add(channel);
        return channel;
    }

    private GrpcRangeSource client(ManagedChannel channel, String clusterId, Duration timeout) {
        return new GrpcRangeSource(new PeerChannel("n2", "n1", clusterId, channel), timer, timeout);
    }

    private static Entry entry(String key, Record record) {
        return new Entry(key.getBytes(StandardCharsets.UTF_8), record);
    }

    private static List<Entry> next(EntryStream stream) throws Exception {
        return stream.next().get(20, TimeUnit.SECONDS);
    }

    private static Throwable failureOf(CompletableFuture<?> f) throws Exception {
        try {
            f.get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("expected a failure, got a batch");
    }

    @Test
    void aScanStreamsRawEntriesOneRequestedBatchAtATime() throws Exception {
        Record value = Record.value(5L << 16, "n3", "v".getBytes(StandardCharsets.UTF_8), 1_700_000_000_000L);
        Record tombstone = Record.tombstone(7L << 16, "n1");
        List<Object> batches = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            batches.add(List.of(entry("k" + i + "a", value), entry("k" + i + "b", tombstone)));
        }
        ScriptedStream stored = new ScriptedStream(batches);
        List<byte[]> ends = new ArrayList<>();
        RangeSource local = (start, end) -> {
            ends.add(end);
            return stored;
        };
        EntryStream scan = client(channelTo(new RangeService(local, 1 << 20)), CLUSTER, PATIENT)
                .open("k".getBytes(StandardCharsets.UTF_8), null);

        List<Entry> first = next(scan);

        assertThat(first).hasSize(2);
        assertThat(first.get(0).record()).as("expiry and writer survive the wire").isEqualTo(value);
        assertThat(first.get(1).record()).as("tombstones are sent").isEqualTo(tombstone);
        assertThat(ends).containsExactly((byte[]) null);
        assertThat(stored.reads.get()).as("the node reads a batch only when the coordinator asked for one")
                .isLessThanOrEqualTo(2);
        int entries = first.size();
        for (List<Entry> batch = next(scan); !batch.isEmpty(); batch = next(scan)) {
            entries += batch.size();
        }
        assertThat(entries).isEqualTo(20);
        TestNode.awaitUntil(PATIENT, () -> stored.closes.get() > 0 && RangeService.activeScans() == 0, "the finished scan closed its stream");
    }

    @Test
    void theNodeAppliesAJoinSelectionSoThatOnlyTheSelectedEntriesTravel() throws Exception {
        JoinSelection digests = new JoinSelection(List.of("n1", "n2", "n3"), List.of("n1", "n2", "n3", "n4"), 3, "n4",
                "n2", Set.of(), JoinSelection.Part.DIGESTS);
        List<Object> batches = new ArrayList<>();
        List<String> selected = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Entry e = entry("key-" + i, Record.value(5L << 16, "n3", ("value-" + i).getBytes(StandardCharsets.UTF_8),
                    Record.NEVER_EXPIRES));
            batches.add(List.of(e));
            if (digests.selects(e.key())) {
                selected.add("key-" + i);
            }
        }
        ScriptedStream stored = new ScriptedStream(batches);
        EntryStream scan = client(channelTo(new RangeService((s, e) -> stored, 1 << 20)), CLUSTER, PATIENT)
                .open("k".getBytes(StandardCharsets.UTF_8), null, digests);

        List<Entry> received = new ArrayList<>();
        for (List<Entry> batch = next(scan); !batch.isEmpty(); batch = next(scan)) {
            received.addAll(batch);
        }

        assertThat(selected).isNotEmpty().hasSizeLessThan(40);
        assertThat(received).extracting(e -> new String(e.key(), StandardCharsets.UTF_8)).containsExactlyElementsOf(selected);
        assertThat(received).allSatisfy(e -> assertThat(e.record().value()).as("a digest, not the value")
                .hasSize(RecordDigest.HASH_BYTES));
    }

    @Test
    void aMalformedJoinSelectionIsRefusedAndNothingIsRead() throws Exception {
        ScriptedStream stored = new ScriptedStream(List.of(List.of(entry("k", Record.tombstone(1, "n1")))));
        ManagedChannel channel = channelTo(new RangeService((s, e) -> stored, 1 << 20));
        RangeScanRequest request = RangeScanRequest.newBuilder()
                .setHeader(new PeerChannel("n2", "n1", CLUSTER, channel).header(1000))
                .setStart(com.google.protobuf.ByteString.copyFromUtf8("k"))
                .setJoin(io.kvorum.proto.JoinSelection.newBuilder().addCurrent("n1").addCurrent("n1")
                        .addComing("n4").setReplicationFactor(3).setTaker("n4").setSource("n1"))
                .build();

        Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() ->
                RangeScanGrpc.newBlockingStub(channel).scan(request).forEachRemaining(b -> { }));

        assertThat(io.grpc.Status.fromThrowable(refused).getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT);
        assertThat(stored.reads.get()).as("nothing was read for it").isZero();
    }

    @Test
    void aNodeOfAnotherClusterIsRefused() throws Exception {
        ScriptedStream stored = new ScriptedStream(List.of(List.of(entry("k", Record.tombstone(1, "n1")))));
        EntryStream scan = client(channelTo(new RangeService((s, e) -> stored, 1 << 20)), "cluster-b", PATIENT)
                .open("k".getBytes(StandardCharsets.UTF_8), null);

        Throwable failure = failureOf(scan.next());

        assertThat(failure).isInstanceOf(ReplicaUnavailableException.class).hasMessageContaining("PERMISSION_DENIED")
                .hasMessageContaining("not a request of this node's cluster").hasMessageNotContaining(CLUSTER);
        assertThat(stored.reads.get()).as("nothing was read for a stranger").isZero();
    }

    @Test
    void overloadedStorageIsReportedAsOverload() throws Exception {
        ScriptedStream stored = new ScriptedStream(List.of(new StorageOverloadedException("read queue full")));
        EntryStream scan = client(channelTo(new RangeService((s, e) -> stored, 1 << 20)), CLUSTER, PATIENT)
                .open("k".getBytes(StandardCharsets.UTF_8), null);

        assertThat(failureOf(scan.next())).isInstanceOf(OverloadedException.class)
                .hasMessageContaining("read queue full");
        TestNode.awaitUntil(PATIENT, () -> stored.closes.get() > 0 && RangeService.activeScans() == 0, "the failed scan closed its stream");
    }

    @Test
    void closingTheStreamCancelsTheScanAndTheNodeClosesItsStream() throws Exception {
        ScriptedStream stored = new ScriptedStream(List.of(
                List.of(entry("a", Record.tombstone(1, "n1"))), List.of(entry("b", Record.tombstone(1, "n1")))));
        EntryStream scan = client(channelTo(new RangeService((s, e) -> stored, 1 << 20)), CLUSTER, PATIENT)
                .open("a".getBytes(StandardCharsets.UTF_8), "z".getBytes(StandardCharsets.UTF_8));

        assertThat(next(scan)).hasSize(1);
        assertThat(RangeService.activeScans()).isEqualTo(1);
        scan.close();

        TestNode.awaitUntil(PATIENT, () -> stored.closes.get() == 1 && RangeService.activeScans() == 0,
                "the cancelled scan closed its stream");
    }

    /** A peer that accepts the scan and never sends a batch: the batch fails at the timeout and the call is cancelled. */
    @Test
    void aFrozenPeerFailsTheBatchAfterTheRequestTimeout() throws Exception {
        CountDownLatch cancelled = new CountDownLatch(1);
        ManagedChannel channel = channelTo(new RangeScanGrpc.RangeScanImplBase() {
            @Override
            public void scan(RangeScanRequest request, StreamObserver<RangeScanBatch> responses) {
                ((ServerCallStreamObserver<RangeScanBatch>) responses).setOnCancelHandler(cancelled::countDown);
            }
        });
        EntryStream scan = client(channel, CLUSTER, Duration.ofMillis(200)).open("a".getBytes(StandardCharsets.UTF_8), null);

        Throwable failure = failureOf(scan.next());

        assertThat(failure).isInstanceOf(ReplicaUnavailableException.class).hasMessageContaining("within 200 ms");
        assertThat(cancelled.await(20, TimeUnit.SECONDS)).as("the scan call was cancelled").isTrue();
        assertThat(failureOf(scan.next())).as("and the stream stays failed").isSameAs(failure);
    }
}
