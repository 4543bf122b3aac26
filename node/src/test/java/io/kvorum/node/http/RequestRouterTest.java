package io.kvorum.node.http;

import static io.kvorum.node.http.EmbeddedConnection.HOST;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.antientropy.AntiEntropyState;
import io.kvorum.node.storage.StorageFailures;
import io.kvorum.node.antientropy.RepairReport;
import io.kvorum.node.antientropy.RoundStats;
import io.kvorum.node.backup.BackupFileWriter;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.http.EmbeddedConnection.Reply;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Routing ({@link RequestRouter} in the real pipeline): which path and method reach which action,
 * and the bodies of {@code /v0/status} and {@code /v0/repair}, byte for byte as docs/http-api.md
 * shows them. A one-node coordinator over an in-memory replica serves the entity API.
 */
class RequestRouterTest {

    private final MemoryReplica replica = new MemoryReplica();
    private final List<Entry> rangeEntries = new ArrayList<>();
    private NodeStatus status = NodeStatus.serving("n1", 1, 1, null, null, null, 0, null, null);
    private ClusterView cluster;
    private boolean member = true;
    private CompletableFuture<RepairReport> repair;
    private RequestRouter router;
    private EmbeddedConnection connection;

    @BeforeEach
    void connect() throws Exception {
        Clock clock = Clock.SYSTEM;
        Coordinator coordinator = new Coordinator("n1", new Placement(Topology.parse("n1=127.0.0.1:8081:9081")),
                Map.of("n1", replica), new HybridLogicalClock(clock), clock, Duration.ofSeconds(30),
                (task, delay, unit) -> () -> { }, (start, end) -> new ListStream(rangeEntries));
        router = new RequestRouter(coordinator, ClusterAdmin.fixed(() -> cluster, 1, 1, () -> member), clock, () -> status, () -> repair,
                () -> CompletableFuture.completedFuture(""), null);
        connection = new EmbeddedConnection(router);
    }

    @AfterEach
    void close() {
        connection.close();
    }

    private Reply exchange(String method, String target, String body) {
        connection.send(method + " " + target + " HTTP/1.1\r\n" + HOST + "Content-Length: "
                + body.getBytes(UTF_8).length + "\r\n\r\n" + body);
        return connection.response();
    }

    private Reply exchange(String method, String target) {
        return exchange(method, target, "");
    }

    @Test
    void theStatusOfASingleNodeHasNoPeersAndNoHints() {
        Reply reply = exchange("GET", "/v0/status");

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(reply.body()).isEqualTo(
                "{\"node\":\"n1\",\"status\":\"serving\",\"clusterSize\":1,\"replicationFactor\":1,\"storageBytes\":0}\n");
    }

    @Test
    void theClusterIsTheDocumentedJson() throws Exception {
        cluster = Membership.first("kvorum", Topology.parse("n2=127.0.0.1:8081:9081,n1=127.0.0.1:8080:9080,n3=127.0.0.1:8082:9082"), 2).view();

        Reply reply = exchange("GET", "/v0/cluster");

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(reply.body()).isEqualTo("{\"name\":\"kvorum\",\"epoch\":1,\"members\":["
                + "{\"id\":\"n1\",\"host\":\"127.0.0.1\",\"http\":8080,\"grpc\":9080,\"state\":\"normal\"},"
                + "{\"id\":\"n2\",\"host\":\"127.0.0.1\",\"http\":8081,\"grpc\":9081,\"state\":\"normal\"},"
                + "{\"id\":\"n3\",\"host\":\"127.0.0.1\",\"http\":8082,\"grpc\":9082,\"state\":\"normal\"}],"
                + "\"replicationFactor\":2}\n");
        assertThat(ClusterView.parse(reply.body())).isEqualTo(cluster);
    }

    @Test
    void theStatusWithPeersAndHintsIsTheDocumentedJson() {
        Map<String, NodeStatus.Peer> peers = new LinkedHashMap<>();
        peers.put("n2", new NodeStatus.Peer("down", 1795444431905L, 16442, "127.0.0.1:8081", null));
        peers.put("n3", new NodeStatus.Peer("up", 1795444421837L, 10317, "127.0.0.1:8082", -3L));
        status = NodeStatus.serving("n1", 3, 3, peers, new NodeStatus.Hints(new TreeMap<>(Map.of("n2", 20L)), 0, 0),
                new AntiEntropyState("ready", 1795444430000L, new TreeMap<>(Map.of("n2",
                        new AntiEntropyState.LastRound(1795444429000L, true, 0, 12, null)))), 52_428_800,
                new StorageFailures.Summary(0, 3, "write: Corruption: block checksum mismatch", 1795444432000L),
                "this node's clock is off from its peers'");

        assertThat(exchange("GET", "/v0/status").body()).isEqualTo("{\"node\":\"n1\",\"status\":\"serving\","
                + "\"clusterSize\":3,\"replicationFactor\":3,\"peers\":{\"n2\":{\"state\":\"down\","
                + "\"since\":1795444431905,\"rttMicros\":16442,\"address\":\"127.0.0.1:8081\"},\"n3\":{\"state\":\"up\","
                + "\"since\":1795444421837,\"rttMicros\":10317,\"address\":\"127.0.0.1:8082\","
                + "\"clockOffsetMillis\":-3}},"
                + "\"hints\":{\"pending\":{\"n2\":20},\"delivered\":0,\"dropped\":0},"
                + "\"antiEntropy\":{\"trees\":\"ready\",\"treesAt\":1795444430000,\"lastRounds\":{\"n2\":"
                + "{\"endedAt\":1795444429000,\"ok\":true,\"recordsExchanged\":0,\"durationMs\":12}}},"
                + "\"storageBytes\":52428800,\"storageErrors\":{\"reads\":0,\"writes\":3,"
                + "\"last\":\"write: Corruption: block checksum mismatch\",\"lastAt\":1795444432000},"
                + "\"writesRefused\":\"this node's clock is off from its peers'\"}\n");
    }

    @Test
    void aCompleteRepairIs200WithTheDocumentedSummary() {
        repair = CompletableFuture.completedFuture(new RepairReport(
                List.of(round("n1"), round("n2")), new TreeMap<>(), 804, "ready"));

        Reply reply = exchange("POST", "/v0/repair");

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(reply.body()).isEqualTo("{\"peers\":[\"n1\",\"n2\"],\"unreachable\":[],\"bucketsCompared\":2097152,"
                + "\"bucketsDiffering\":0,\"recordsSent\":0,\"recordsReceived\":0,\"bytesSent\":100,"
                + "\"bytesReceived\":28,\"durationMs\":804,\"trees\":\"ready\"}\n");
    }

    @Test
    void anIncompleteRepairIs504NamingThePeersAndSummingUpTheRest() {
        repair = new CompletableFuture<>();
        connection.send("POST /v0/repair HTTP/1.1\r\n" + HOST + "\r\n");
        assertThat(connection.responses()).as("answered when the run ends").isEmpty();

        repair.complete(new RepairReport(List.of(round("n2")),
                new TreeMap<>(Map.of("n3", "n3 is unreachable: UNAVAILABLE: io exception")), 57, "ready"));
        Reply reply = connection.response();

        assertThat(reply.status()).isEqualTo(504);
        assertThat(reply.body()).isEqualTo("Repair incomplete: could not reach n3 (n3 is unreachable: UNAVAILABLE: "
                + "io exception); completed rounds: {\"peers\":[\"n2\"],\"unreachable\":[\"n3\"],"
                + "\"bucketsCompared\":1048576,\"bucketsDiffering\":0,\"recordsSent\":0,\"recordsReceived\":0,"
                + "\"bytesSent\":50,\"bytesReceived\":14,\"durationMs\":57,\"trees\":\"ready\"}\n");
    }

    /** A round with one peer between identical replicas of the default tree shape. */
    private static RoundStats round(String peer) {
        return new RoundStats(peer, 1 << 20, 0, 0, 0, 50, 14, 20);
    }

    @Test
    void aHeadOfTheStatusOrTheMembershipIsTheGetsAnswerWithoutItsBody() {
        for (String path : java.util.List.of("/v0/status", "/v0/cluster")) {
            int length = exchange("GET", path).body().getBytes(UTF_8).length;
            connection.send("HEAD " + path + " HTTP/1.1\r\n" + HOST + "\r\n");
            String sent = connection.rawOutput();
            assertThat(sent).as("HEAD %s", path).startsWith("HTTP/1.1 200 OK\r\n")
                    .contains("content-length: " + length + "\r\n").endsWith("\r\n\r\n");
        }
    }

    @Test
    void aNodeThatLeftIsNotReadyAndSendsClientsToTheMembers() throws Exception {
        cluster = Membership.first("kvorum", Topology.parse("n2=127.0.0.1:8081:9081,n3=127.0.0.1:8082:9082"), 2).view();
        member = false;

        Reply status = exchange("GET", "/v0/status");
        assertThat(status.status()).isEqualTo(503);
        assertThat(status.headers().get(HttpHeaderNames.RETRY_AFTER)).as("another node serves now").isEqualTo("0");
        assertThat(status.body()).contains("not a member").contains("127.0.0.1:8081, 127.0.0.1:8082");
        connection.send("HEAD /v0/status HTTP/1.1\r\n" + HOST + "\r\n");
        assertThat(connection.rawOutput()).startsWith("HTTP/1.1 503 Service Unavailable\r\n");
        assertThat(exchange("GET", "/v0/entity?id=k").status()).as("a read").isEqualTo(503);
        Reply membership = exchange("GET", "/v0/cluster");
        assertThat(membership.status()).as("the membership, where clients learn the members").isEqualTo(200);
        assertThat(ClusterView.parse(membership.body())).isEqualTo(cluster);
    }

    @Test
    void aWriteThatWaitsFor100ContinueIsRefusedBeforeItsBodyWhenItsQueryIsWrong() {
        for (String target : List.of("/v0/entity", "/v0/entity?id=k&ack=3&from=1", "/v0/entity?id=k&ttl=soon")) {
            EmbeddedConnection fresh = new EmbeddedConnection(router);
            fresh.send("PUT " + target + " HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: 100\r\n\r\n");
            Reply refused = fresh.response();
            assertThat(refused.status()).as("PUT %s", target).isEqualTo(400);
            assertThat(refused.body()).as("PUT %s", target).isEqualTo(bodyOf400(target));
            assertThat(fresh.isOpen()).as("its body never read: the connection closes").isFalse();
        }

        connection.send("PUT /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n");
        assertThat(connection.response().status()).as("a good write is asked for its body").isEqualTo(100);
        connection.send("v1");
        assertThat(connection.response().status()).isEqualTo(201);
    }

    /** The 400 a PUT to {@code target} gets with its body, without the expectation. */
    private String bodyOf400(String target) {
        EmbeddedConnection plain = new EmbeddedConnection(router);
        plain.send("PUT " + target + " HTTP/1.1\r\n" + HOST + "Content-Length: 2\r\n\r\nv1");
        Reply reply = plain.response();
        plain.close();
        assertThat(reply.status()).isEqualTo(400);
        return reply.body();
    }

    @Test
    void eachPathAllowsItsMethodsOnly() {
        Map<String, String> allowed = Map.of("/v0/entity?id=k", "GET, PUT, DELETE", "/v0/entities?start=a", "GET",
                "/v0/status", "GET, HEAD", "/v0/cluster", "GET, HEAD", "/v0/repair", "POST");
        allowed.forEach((target, methods) -> {
            Reply refused = exchange("PATCH", target);
            assertThat(refused.status()).as("PATCH %s", target).isEqualTo(405);
            assertThat(refused.headers().get(HttpHeaderNames.ALLOW)).as("Allow of %s", target).isEqualTo(methods);
            assertThat(refused.body()).isEqualTo("method not allowed; use " + methods + "\n");
        });
        assertThat(exchange("POST", "/v0/status").status()).isEqualTo(405);
        assertThat(exchange("POST", "/v0/cluster").status()).isEqualTo(405);
        assertThat(exchange("GET", "/v0/repair").status()).isEqualTo(405);
    }

    @Test
    void anUnknownPathIs400NamingTheApi() {
        Reply reply = exchange("GET", "/v0/statuses");

        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.body()).isEqualTo("unknown path '/v0/statuses'; the API is /v0/entity, /v0/entities, "
                + "/v0/status, /v0/cluster, /v0/cluster/leave, /v0/cluster/remove, /v0/cleanup, /v0/repair, /v0/backup, "
                + "/v0/backup/<id>, /v0/restore and /metrics\n");
        assertThat(connection.isOpen()).isTrue();
    }

    @Test
    void theEntityApiPutsGetsAndDeletes() {
        assertThat(exchange("GET", "/v0/entity?id=k").status()).isEqualTo(404);
        assertThat(exchange("PUT", "/v0/entity?id=k", "v1").status()).isEqualTo(201);

        Reply read = exchange("GET", "/v0/entity?id=k");
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/octet-stream");
        assertThat(read.body()).isEqualTo("v1");

        assertThat(exchange("DELETE", "/v0/entity?id=k").status()).isEqualTo(202);
        Reply gone = exchange("GET", "/v0/entity?id=k");
        assertThat(gone.status()).isEqualTo(404);
        assertThat(gone.body()).isEqualTo("not found\n");
    }

    @Test
    void badParametersAre400WithWhatWasWrong() {
        assertThat(exchange("GET", "/v0/entity").status()).isEqualTo(400);
        Reply ttl = exchange("GET", "/v0/entity?id=k&ttl=5");
        assertThat(ttl.status()).isEqualTo(400);
        assertThat(ttl.body()).isEqualTo("ttl is only allowed on PUT\n");
        assertThat(exchange("GET", "/v0/entities?start=a&ttl=5").body()).isEqualTo("ttl is only allowed on PUT\n");
        assertThat(replica.records).as("nothing written").isEmpty();
    }

    @Test
    void anAbsoluteFormTargetIsRoutedByItsPath() {
        assertThat(exchange("GET", "http://127.0.0.1:8080/v0/status").status()).isEqualTo(200);
        assertThat(exchange("PUT", "http://127.0.0.1:8080/v0/entity?id=k", "v").status()).isEqualTo(201);
        assertThat(replica.records).containsKey("k");
    }

    @Test
    void aRangeIsStreamedAsOneChunkPerEntry() {
        rangeEntries.add(new Entry("a".getBytes(UTF_8), Record.value(1, "n1", "1".getBytes(UTF_8), Record.NEVER_EXPIRES)));
        rangeEntries.add(new Entry("b".getBytes(UTF_8), Record.value(2, "n1", "2".getBytes(UTF_8), Record.NEVER_EXPIRES)));

        Reply reply = exchange("GET", "/v0/entities?start=a");

        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.body()).isEqualTo("a\n1b\n2");
        assertThat(connection.isOpen()).isTrue();
    }

    /** A replica in a map; answers at once. */
    /** A batch for {@code POST /v0/restore}: {@code KVB1}, the entries, the end marker and {@code count}. */
    private static byte[] restoreBatch(Map<String, Record> records, long count, byte[] trailing) throws Exception {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
        BackupFileWriter.writeMagic(out);
        for (Map.Entry<String, Record> e : records.entrySet()) {
            BackupFileWriter.writeEntry(out, e.getKey().getBytes(UTF_8), e.getValue());
        }
        BackupFileWriter.writeEnd(out, count);
        out.write(trailing);
        return bytes.toByteArray();
    }

    private Reply restore(byte[] body) {
        connection.send("POST /v0/restore HTTP/1.1\r\n" + HOST + "Content-Length: " + body.length + "\r\n\r\n"
                + new String(body, java.nio.charset.StandardCharsets.ISO_8859_1));
        return connection.response();
    }

    @Test
    void aRestoredRecordKeepsItsTimestampAndNeverReplacesANewerOne() throws Exception {
        Record newer = Record.value(HybridLogicalClock.pack(2_000, 0), "n9", "newer".getBytes(UTF_8), 0);
        replica.records.put("kept", newer);
        Map<String, Record> batch = new LinkedHashMap<>();
        batch.put("a", Record.value(HybridLogicalClock.pack(1_000, 3), "n7", "old".getBytes(UTF_8), 5_000_000_000_000L));
        batch.put("b", Record.tombstone(HybridLogicalClock.pack(1_500, 0), "n8"));
        batch.put("kept", Record.value(HybridLogicalClock.pack(1_000, 0), "n7", "older".getBytes(UTF_8), 0));

        Reply reply = restore(restoreBatch(batch, 3, new byte[0]));

        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        assertThat(reply.body()).isEqualTo("{\"restored\":3}\n");
        assertThat(replica.records.get("a")).usingRecursiveComparison().isEqualTo(batch.get("a"));
        assertThat(replica.records.get("b")).usingRecursiveComparison().isEqualTo(batch.get("b"));
        assertThat(replica.records.get("kept")).isSameAs(newer);
        assertThat(restore(restoreBatch(batch, 3, new byte[0])).status()).as("the same batch again").isEqualTo(200);
        assertThat(replica.records.get("a")).usingRecursiveComparison().isEqualTo(batch.get("a"));
    }

    @Test
    void aMalformedRestoreBatchIsA400AndWritesNothing() throws Exception {
        Map<String, Record> good = new LinkedHashMap<>();
        good.put("a", Record.value(HybridLogicalClock.pack(1_000, 0), "n7", "v".getBytes(UTF_8), 0));
        good.put("b", Record.value(HybridLogicalClock.pack(1_000, 0), "n7", "w".getBytes(UTF_8), 0));
        byte[] whole = restoreBatch(good, 2, new byte[0]);
        byte[] badMagic = whole.clone();
        badMagic[3] = '2';
        byte[] negativeLength = whole.clone();
        int secondValueLength = whole.length - 12 - 1 - 4; // before the last value, its end marker and count
        negativeLength[secondValueLength] = (byte) 0x80;
        Map<String, byte[]> bodies = new LinkedHashMap<>();
        bodies.put("the count differs", restoreBatch(good, 3, new byte[0]));
        bodies.put("bytes after the count", restoreBatch(good, 2, new byte[] {0}));
        bodies.put("cut short", java.util.Arrays.copyOf(whole, whole.length - 13));
        bodies.put("another magic", badMagic);
        bodies.put("a negative value length", negativeLength);
        bodies.put("empty", new byte[0]);
        for (Map.Entry<String, byte[]> body : bodies.entrySet()) {
            Reply reply = restore(body.getValue());
            assertThat(reply.status()).as(body.getKey()).isEqualTo(400);
            assertThat(reply.body()).as(body.getKey()).startsWith("not a batch of backup entries");
            assertThat(replica.records).as(body.getKey() + ": nothing written").isEmpty();
        }
    }

    private static final class MemoryReplica implements Replica {
        final Map<String, Record> records = new ConcurrentHashMap<>();

        @Override
        public String nodeId() {
            return "n1";
        }

        @Override
        public CompletableFuture<Record> read(byte[] key) {
            return CompletableFuture.completedFuture(records.get(new String(key, UTF_8)));
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            return read(key).thenApply(RecordDigest::of);
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            records.merge(new String(key, UTF_8), record, Record::newest);
            return CompletableFuture.completedFuture(true);
        }
    }

    /** The given entries in one batch, then the end. */
    private static final class ListStream implements EntryStream {
        private List<Entry> rest;

        ListStream(List<Entry> entries) {
            this.rest = List.copyOf(entries);
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            List<Entry> batch = rest;
            rest = List.of();
            return CompletableFuture.completedFuture(batch);
        }

        @Override
        public void close() {
        }
    }
}
