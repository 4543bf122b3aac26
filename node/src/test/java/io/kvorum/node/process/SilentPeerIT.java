package io.kvorum.node.process;

import static io.kvorum.testkit.NodeJvm.clusterMember;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.Topology;
import io.kvorum.proto.ReadRequest;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import io.kvorum.proto.RequestHeader;
import io.kvorum.testkit.NodeJvm;
import io.kvorum.testkit.Ports;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The peer port under a peer that never reads its answers (docs/architecture.md#limits-of-the-peer-port),
 * against a node process: a client that claims to be member n2 opens {@code Replication.Exchange}
 * to n1 and sends reads of a 64 KiB value without ever asking for an answer. n1 stops reading that
 * stream (HTTP/2 flow control then holds the client back), so what it holds for it is bounded (its
 * resident memory is watched), and it goes on serving its clients. A node that read on would take
 * every request and buffer an answer to each.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SilentPeerIT {

    /** Far more reads than a node may take from one stream without sending answers. */
    private static final int MAX_SENT = 100_000;
    private static final int VALUE_BYTES = 64 << 10;
    /**
     * Reads a node may take from a stream whose answers wait, with what HTTP/2's stream window
     * and the client's own buffer hold: a window of 8,192 requests and about 12,000 more (some
     * 20,500 here). A node that read on takes all {@value #MAX_SENT}.
     */
    private static final int MAX_TAKEN = 50_000;
    /**
     * What n1's resident memory may grow by: its heap filling up, and the answers it holds within
     * its budget. A node that read on holds an answer for each of the tens of thousands of reads
     * sent before HTTP/2 holds the client back, over a GiB.
     */
    private static final long MAX_GROWTH = 512L << 20;

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    @Test
    void aPeerThatNeverReadsItsAnswersIsHeldBackAndTheNodeServesOn() throws Exception {
        int[] ports = Ports.freePorts(4);
        String cluster = clusterMember("n1", ports[0], ports[1]) + "," + clusterMember("n2", ports[2], ports[3]);
        // A heap of 256 MiB, and room for 2 GiB of direct memory, where Netty would buffer the answers of a node
        // that read on: what it holds shows in its resident memory.
        NodeJvm n1 = nodes.launch("n1").heap("256m").jvmOptions("-XX:MaxDirectMemorySize=2g").args("--cluster", cluster, "--node-id", "n1",
                "--data-dir", tmp.resolve("n1").toString(), "--anti-entropy-interval", "0", "--hint-max-age", "0").start();
        n1.awaitReady(ports[0]);
        // n2 answers n1's pings once, so that n1, on a fresh store, knows it is new and serves reads;
        // then this test's silent stream stands in for it.
        NodeJvm n2 = nodes.launch("n2").args("--cluster", cluster, "--node-id", "n2",
                "--data-dir", tmp.resolve("n2").toString(), "--anti-entropy-interval", "0", "--hint-max-age", "0").start();
        n2.awaitReady(ports[2]);
        n1.awaitServing(ports[0]);
        n2.terminate();
        assertThat(n2.awaitExit(Duration.ofSeconds(10))).as("n2's exit status after SIGTERM").isZero();
        HttpClient http = HttpClient.newHttpClient();
        URI entity = URI.create("http://127.0.0.1:" + ports[0] + "/v0/entity?id=big&ack=1&from=2");
        assertThat(http.send(HttpRequest.newBuilder(entity).PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[VALUE_BYTES]))
                .build(), HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(201);

        long rssBefore = rssBytes(n1);
        String identity = Membership.first("kvorum", Topology.parse(cluster), 2).identity();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", ports[1]).usePlaintext().build();
        try {
            ClientCall<ReplicaRequest, ReplicaResponse> call =
                    channel.newCall(ReplicationGrpc.getExchangeMethod(), CallOptions.DEFAULT);
            call.start(new ClientCall.Listener<>() {
            }, new Metadata()); // and never call.request(n): not one answer is read
            int sent = 0;
            long notReadySince = 0;
            while (sent < MAX_SENT) {
                if (call.isReady()) {
                    call.sendMessage(read(identity, sent++));
                    notReadySince = 0;
                } else if (notReadySince == 0) {
                    notReadySince = System.nanoTime();
                } else if (System.nanoTime() - notReadySince > TimeUnit.SECONDS.toNanos(3)) {
                    break; // held back for 3 s: n1 has stopped reading the stream
                } else {
                    Thread.onSpinWait();
                }
            }
            assertThat(sent).as("reads n1 took before it stopped reading the silent stream").isLessThan(MAX_TAKEN);
            long peak = rssBytes(n1);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < until && n1.isAlive()) { // what it took goes on being served meanwhile
                peak = Math.max(peak, rssBytes(n1));
                Thread.sleep(100); // a sampling interval, not a wait for a condition
            }
            assertThat(peak - rssBefore).as("n1's resident memory grew by, with %d reads of %d bytes unanswered", sent,
                    VALUE_BYTES).isLessThan(MAX_GROWTH);
            assertThat(n1.isAlive()).as("n1 running\n%s", n1.describe()).isTrue();
            HttpResponse<byte[]> read = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports[0]
                    + "/v0/entity?id=big&ack=1&from=2")).timeout(Duration.ofSeconds(3)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(read.statusCode()).as("a client's read while the silent stream is held").isEqualTo(200);
            assertThat(read.body()).hasSize(VALUE_BYTES);
            call.cancel("done", null);
        } finally {
            channel.shutdownNow();
        }
        HttpResponse<String> status = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports[0]
                + "/v0/status")).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(status.statusCode()).isEqualTo(200);
    }

    /** The process's resident set size, from Linux's /proc. */
    private static long rssBytes(NodeJvm node) throws java.io.IOException {
        for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/" + node.pid() + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS for " + node.name());
    }

    private static ReplicaRequest read(String identity, long callId) {
        RequestHeader header = RequestHeader.newBuilder().setClusterId(identity).setClusterName("kvorum").setSender("n2")
                .setEpoch(1).setCallId(callId).setTimeoutMillis(60_000).build();
        return ReplicaRequest.newBuilder().setHeader(header)
                .setRead(ReadRequest.newBuilder().setKey(ByteString.copyFromUtf8("big"))).build();
    }
}
