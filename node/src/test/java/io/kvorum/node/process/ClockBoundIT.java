package io.kvorum.node.process;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.proto.ReadRequest;
import io.kvorum.proto.RecordProto;
import io.kvorum.proto.ReplicaError;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import io.kvorum.proto.RequestHeader;
import io.kvorum.proto.WriteRequest;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#clocks, with real node processes: a peer's timestamp from far ahead moves no
 * clock, and a node whose clock runs ahead deletes no value with a {@code ttl} early
 * (docs/operations.md#expiry-and-tombstones).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClockBoundIT {

    private static final int N1 = 0;
    private static final int N2 = 1;
    private static final String CLUSTER_NAME = "kvorum";
    private static final long HOUR = TimeUnit.HOURS.toMillis(1);

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private final Http http = new Http();

    /**
     * n1 runs; the test speaks the peer protocol as n2, a member that is otherwise down. A replica
     * write stamped an hour ahead is refused ({@code TIMESTAMP_AHEAD}), logged, and not stored; then
     * a write through n1 is accepted and stamped at the wall clock's time. Had n1's clock taken the
     * hour, n1 would refuse writes (its timestamps far ahead of its wall clock) or stamp them an hour
     * ahead.
     */
    @Test
    void aPeerWriteStampedAnHourAheadIsRefusedAndMovesNoClock() throws Exception {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 2, "--replication-factor", "2",
                "--cluster-name", CLUSTER_NAME);
        // n2 answers n1's pings once, so that n1, on a fresh store, knows it is new and serves reads;
        // then this test takes n2's place on n1's replication stream.
        cluster.startAllReady(N1, N2);
        NodeJvm n1 = cluster.process(N1);
        n1.awaitServing(cluster.http(N1));
        cluster.stop(N2);
        Topology topology = topology(cluster);
        String future = keysWhoseFirstReplicaIs(cluster, "n1", "future-");
        String later = keysWhoseFirstReplicaIs(cluster, "n1", "later-");

        try (PeerStream n2 = new PeerStream(topology.member("n1").grpcPort(),
                Membership.first(CLUSTER_NAME, topology, 2).identity(), "n2")) {
            long anHourAhead = System.currentTimeMillis() + HOUR;
            ReplicaResponse refused = n2.write(future, HybridLogicalClock.pack(anHourAhead, 0), "from the future");
            assertThat(refused.getError().getCode()).as("n1's answer to a write stamped an hour ahead: %s", refused)
                    .isEqualTo(ReplicaError.Code.TIMESTAMP_AHEAD);
            assertThat(n2.read(future).getRead().hasRecord()).as("n1's copy of the refused key").isFalse();
            Await.until("n1 to log the refusal", Duration.ofSeconds(10),
                    () -> n1.stdout().contains("refused records stamped by n2"), n1::stdout);

            long before = System.currentTimeMillis();
            HttpResponse<String> put = send(HttpRequest.newBuilder(cluster.entity(N1, later, "ack=1&from=1"))
                    .PUT(HttpRequest.BodyPublishers.ofString("now")));
            long after = System.currentTimeMillis();
            assertThat(put.statusCode()).as("PUT through n1 after the refusal: %s", put.body()).isEqualTo(201);
            long stamped = HybridLogicalClock.physicalMillis(n2.read(later).getRead().getRecord().getTimestamp());
            assertThat(stamped).as("the time n1 stamped the PUT with, sent between %d and %d", before, after)
                    .isBetween(before - 1_000, after + 1_000);
        }
        assertThat(send(HttpRequest.newBuilder(cluster.entity(N1, future, "ack=1&from=1")).GET()).statusCode())
                .as("GET of the refused key through n1").isEqualTo(404);
    }

    /**
     * Two nodes, n2's wall clock 5 s ahead of n1's (a test hook, docs/architecture.md#test-hooks):
     * neither refuses writes (of two clocks that disagree neither can tell whose is wrong), so only
     * the purge rule stands between n2 and an early delete. A value written through n1 with a ttl
     * of 8 s, on both nodes, reads back through n1 from both replicas until shortly before it
     * expires by n1's clock, although n2 sees it expired 5 s earlier and purges every 200 ms: a
     * tombstone n2 made of it would outrank the value and read as 404.
     */
    @Test
    void aValueWithATtlIsNotDeletedEarlyByANodeWhoseClockRunsAhead() {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 2, "--replication-factor", "2",
                "--purge-interval", "200", "--anti-entropy-interval", "0");
        cluster.start(N1);
        cluster.start(N2, "-Dkvorum.test.clockShiftMillis=5000");
        cluster.process(N1).awaitReady(cluster.http(N1));
        cluster.process(N2).awaitReady(cluster.http(N2));
        awaitOffsetMeasured(cluster);

        String key = keysWhoseFirstReplicaIs(cluster, "n2", "ttl-");
        long ttl = 8_000;
        // Retried until both replicas take it (a loaded machine may miss a heartbeat); a failed
        // attempt's copy is older, and the one acknowledged replaces it.
        AtomicLong sent = new AtomicLong();
        AtomicReference<String> lastPut = new AtomicReference<>("no answer yet");
        Await.until("a PUT with ttl through n1 to be acknowledged by both replicas", Duration.ofSeconds(30), () -> {
            sent.set(System.currentTimeMillis());
            HttpResponse<String> put = send(HttpRequest.newBuilder(cluster.entity(N1, key, "ack=2&from=2&ttl=" + ttl))
                    .PUT(HttpRequest.BodyPublishers.ofString("expires in 8 s")));
            lastPut.set(put.statusCode() + " " + put.body());
            return put.statusCode() == 201;
        }, lastPut::get);

        // n2 sees the value expired from sent + 3 s on, and purges every 200 ms; an early purge would
        // read as 404 through n1 from then on. Read until 1.5 s before it expires by n1's clock.
        HttpRequest get = HttpRequest.newBuilder(cluster.entity(N1, key, "ack=2&from=2"))
                .timeout(Duration.ofSeconds(2)).GET().build();
        long seenExpiredByN2 = sent.get() + ttl - 5_000 + 500;
        long until = sent.get() + ttl - 1_500;
        int foundAfterN2SawItExpired = 0;
        while (System.currentTimeMillis() < until) {
            HttpResponse<String> r = send(get);
            long at = System.currentTimeMillis();
            assertThat(r.statusCode()).as("GET ack=2&from=2 through n1, %d ms after the PUT with ttl %d (n2's clock "
                    + "5 s ahead; its log:\n%s)", at - sent.get(), ttl, cluster.process(N2).stdout()).isNotEqualTo(404);
            if (r.statusCode() == 200 && at > seenExpiredByN2 + 1_000) {
                foundAfterN2SawItExpired++;
            }
        }
        assertThat(foundAfterN2SawItExpired).as("reads answered 200 more than a second after n2 saw the value "
                + "expired (others may answer 504 on a loaded machine; only 404 is wrong)").isPositive();
    }

    /** Polls n2's {@code GET /v0/status} until it shows n1's clock about 5 s behind its own. */
    private void awaitOffsetMeasured(ProcessCluster cluster) {
        Pattern offset = Pattern.compile("\"n1\":\\{[^}]*\"clockOffsetMillis\":(-?\\d+)");
        HttpRequest status = HttpRequest.newBuilder(URI.create(NodeJvm.loopbackUri(cluster.http(N2)) + "/v0/status"))
                .timeout(Duration.ofSeconds(2)).GET().build();
        AtomicReference<String> last = new AtomicReference<>("no answer yet");
        AtomicLong measured = new AtomicLong(Long.MIN_VALUE);
        Await.until("n2 to measure n1's clock", Duration.ofSeconds(30), () -> {
            String body = send(status).body();
            last.set(body);
            Matcher m = offset.matcher(body);
            if (m.find()) {
                measured.set(Long.parseLong(m.group(1)));
                return true;
            }
            return false;
        }, last::get);
        assertThat(measured.get()).as("n1's clock minus n2's, as n2 measured it").isBetween(-5_500L, -4_500L);
    }

    private static Topology topology(ProcessCluster cluster) {
        try {
            return Topology.parse(cluster.spec());
        } catch (InvalidTopologyException e) {
            throw new AssertionError(e);
        }
    }

    /** A key, named from {@code prefix}, whose first replica is {@code node}. */
    private static String keysWhoseFirstReplicaIs(ProcessCluster cluster, String node, String prefix) {
        Placement placement = new Placement(topology(cluster));
        return IntStream.range(0, 1000).mapToObj(i -> prefix + i)
                .filter(k -> placement.replicasFor(k.getBytes(StandardCharsets.UTF_8), 1).get(0).id().equals(node))
                .findFirst().orElseThrow();
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        return http.send(request);
    }

    private HttpResponse<String> send(HttpRequest request) {
        return http.send(request);
    }

    /** One {@code Replication.Exchange} stream to a node, as the member {@code sender} opens it. */
    private static final class PeerStream implements AutoCloseable {
        private final ManagedChannel channel;
        private final StreamObserver<ReplicaRequest> requests;
        private final Map<Long, CompletableFuture<ReplicaResponse>> calls = new ConcurrentHashMap<>();
        private final AtomicLong nextCall = new AtomicLong();
        private final String clusterId;
        private final String sender;

        PeerStream(int grpcPort, String clusterId, String sender) {
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build();
            this.clusterId = clusterId;
            this.sender = sender;
            this.requests = ReplicationGrpc.newStub(channel).exchange(new StreamObserver<>() {
                @Override
                public void onNext(ReplicaResponse response) {
                    CompletableFuture<ReplicaResponse> call = calls.remove(response.getCallId());
                    if (call != null) {
                        call.complete(response);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    calls.values().forEach(c -> c.completeExceptionally(t));
                }

                @Override
                public void onCompleted() {
                    calls.values().forEach(c -> c.completeExceptionally(new IllegalStateException("stream ended")));
                }
            });
        }

        ReplicaResponse write(String key, long timestamp, String value) throws Exception {
            return call(ReplicaRequest.newBuilder().setWrite(WriteRequest.newBuilder().setKey(bytes(key))
                    .setRecord(RecordProto.newBuilder().setTimestamp(timestamp).setWriter(sender)
                            .setValue(bytes(value)))));
        }

        ReplicaResponse read(String key) throws Exception {
            return call(ReplicaRequest.newBuilder().setRead(ReadRequest.newBuilder().setKey(bytes(key))));
        }

        private ReplicaResponse call(ReplicaRequest.Builder request) throws Exception {
            long id = nextCall.incrementAndGet();
            CompletableFuture<ReplicaResponse> answer = new CompletableFuture<>();
            calls.put(id, answer);
            synchronized (requests) {
                requests.onNext(request.setHeader(RequestHeader.newBuilder().setClusterId(clusterId)
                        .setClusterName(CLUSTER_NAME).setSender(sender).setCallId(id).setTimeoutMillis(10_000)
                        .setEpoch(Membership.FIRST_EPOCH)).build());
            }
            return answer.get(10, TimeUnit.SECONDS);
        }

        private static ByteString bytes(String s) {
            return ByteString.copyFromUtf8(s);
        }

        @Override
        public void close() throws InterruptedException {
            requests.onCompleted();
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
