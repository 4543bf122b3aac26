package io.kvorum.perf.ycsb;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.kvorum.testkit.Ports;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/** The binding against a real in-process node: what YCSB's operations do to Kvorum entries. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvorumDBTest {

    @TempDir
    static Path dataDir;
    static InProcessNode node;

    private final List<DB> opened = new ArrayList<>();

    @BeforeAll
    static void startNode() throws Exception {
        node = InProcessNode.start(dataDir);
    }

    @AfterAll
    static void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    @AfterEach
    void cleanUp() throws DBException {
        for (DB db : opened) {
            db.cleanup();
        }
        assertThat(SharedClients.references()).as("every init is paired with a cleanup").isZero();
    }

    @Test
    void insertedRecordReadsBackWithAllItsFields() {
        DB db = open(node.uri().toString());
        Map<String, String> record = Map.of("field0", "Ada", "field1", "", "名前", "Lovelace\nwith a newline");

        assertThat(db.insert("usertable", "user1", bytes(record))).isEqualTo(Status.OK);

        Map<String, ByteIterator> read = new HashMap<>();
        assertThat(db.read("usertable", "user1", null, read)).isEqualTo(Status.OK);
        assertThat(strings(read)).isEqualTo(record);
    }

    @Test
    void readOfSomeFieldsReturnsOnlyThoseTheRecordHas() {
        DB db = open(node.uri().toString());
        db.insert("usertable", "user2", bytes(Map.of("field0", "a", "field1", "b", "field2", "c")));

        Map<String, ByteIterator> read = new HashMap<>();
        assertThat(db.read("usertable", "user2", Set.of("field1", "field2", "noSuchField"), read)).isEqualTo(Status.OK);
        assertThat(strings(read)).isEqualTo(Map.of("field1", "b", "field2", "c"));
    }

    @Test
    void updateMergesTheGivenFieldsIntoTheStoredRecord() {
        DB db = open(node.uri().toString());
        db.insert("usertable", "user3", bytes(Map.of("field0", "a", "field1", "b", "field2", "c")));

        assertThat(db.update("usertable", "user3", bytes(Map.of("field1", "B", "field3", "d")))).isEqualTo(Status.OK);

        Map<String, ByteIterator> read = new HashMap<>();
        db.read("usertable", "user3", null, read);
        assertThat(strings(read)).isEqualTo(Map.of("field0", "a", "field1", "B", "field2", "c", "field3", "d"));
    }

    @Test
    void updateOfAnAbsentRecordIsNotFoundAndWritesNothing() {
        DB db = open(node.uri().toString());

        assertThat(db.update("usertable", "never-inserted", bytes(Map.of("field0", "x")))).isEqualTo(Status.NOT_FOUND);
        assertThat(db.read("usertable", "never-inserted", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
    }

    @Test
    void deletedRecordIsNotFound() {
        DB db = open(node.uri().toString());
        db.insert("usertable", "user4", bytes(Map.of("field0", "a")));

        assertThat(db.delete("usertable", "user4")).isEqualTo(Status.OK);

        Map<String, ByteIterator> read = new HashMap<>();
        assertThat(db.read("usertable", "user4", null, read)).isEqualTo(Status.NOT_FOUND);
        assertThat(read).isEmpty();
    }

    @Test
    void scanReadsRecordcountRecordsInKeyOrderFromTheStartKey() {
        DB db = open(node.uri().toString());
        insertTable(db, "scan1", 10);

        Vector<HashMap<String, ByteIterator>> result = new Vector<>();
        assertThat(db.scan("scan1", "k03", 4, null, result)).isEqualTo(Status.OK);

        List<Map<String, String>> records = result.stream().map(KvorumDBTest::strings).toList();
        assertThat(records).extracting(r -> r.get("id")).containsExactly("k03", "k04", "k05", "k06");
        assertThat(records.get(0)).isEqualTo(Map.of("id", "k03", "field0", "value of k03"));
    }

    @Test
    void scanStopsAtTheEndOfItsTable() {
        DB db = open(node.uri().toString());
        // Neighbours on both sides in key order: "scan2" < "scan2:..." < "scan2;" < "scan2a:...".
        insertTable(db, "scan", 3);
        insertTable(db, "scan2", 10);
        insertTable(db, "scan2a", 3);

        Vector<HashMap<String, ByteIterator>> result = new Vector<>();
        assertThat(db.scan("scan2", "k07", 100, Set.of("id"), result)).isEqualTo(Status.OK);

        List<Map<String, String>> records = result.stream().map(KvorumDBTest::strings).toList();
        assertThat(records).extracting(r -> r.get("id")).containsExactly("k07", "k08", "k09");
        assertThat(records).allSatisfy(r -> assertThat(r).containsOnlyKeys("id"));
    }

    @Test
    void scanPastTheLastKeyIsEmpty() {
        DB db = open(node.uri().toString());
        insertTable(db, "scan3", 2);

        Vector<HashMap<String, ByteIterator>> result = new Vector<>();
        assertThat(db.scan("scan3", "z", 10, null, result)).isEqualTo(Status.OK);
        assertThat(result).isEmpty();
    }

    @Test
    void refusedRequestIsAnError() {
        // from = 2 on a one-node cluster is a 400.
        DB db = open(node.uri().toString(), Map.of(KvorumDB.FROM, "2", KvorumDB.ACK, "1"));

        assertThat(db.insert("usertable", "user5", bytes(Map.of("field0", "a")))).isEqualTo(Status.ERROR);
        assertThat(db.read("usertable", "user5", null, new HashMap<>())).isEqualTo(Status.ERROR);
    }

    @Test
    void unreachableNodeIsAnError() throws IOException {
        DB db = open("http://127.0.0.1:" + Ports.freePort());

        assertThat(db.read("usertable", "user6", null, new HashMap<>())).isEqualTo(Status.ERROR);
        assertThat(db.scan("usertable", "user6", 10, null, new Vector<>())).isEqualTo(Status.ERROR);
    }

    @Test
    void overloadedNodeIsServiceUnavailable() throws IOException {
        HttpServer overloaded = answering503();
        try {
            DB db = open("http://127.0.0.1:" + overloaded.getAddress().getPort());

            assertThat(db.read("usertable", "user7", null, new HashMap<>())).isEqualTo(Status.SERVICE_UNAVAILABLE);
            assertThat(db.insert("usertable", "user7", bytes(Map.of("f", "v")))).isEqualTo(Status.SERVICE_UNAVAILABLE);
            assertThat(db.delete("usertable", "user7")).isEqualTo(Status.SERVICE_UNAVAILABLE);
        } finally {
            overloaded.stop(0);
        }
    }

    @Test
    void instancesTakeTheUrlsInTurn() throws IOException {
        HttpServer overloaded = answering503();
        try {
            String urls = node.uri() + ", http://127.0.0.1:" + overloaded.getAddress().getPort();
            DB first = open(urls);
            DB second = open(urls);
            DB third = open(urls);

            assertThat(first.read("usertable", "absent", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
            assertThat(second.read("usertable", "absent", null, new HashMap<>())).isEqualTo(Status.SERVICE_UNAVAILABLE);
            assertThat(third.read("usertable", "absent", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
        } finally {
            overloaded.stop(0);
        }
    }

    @Test
    void initWithoutUrlsFailsSayingWhatIsMissing() {
        KvorumDB db = new KvorumDB();
        db.setProperties(new Properties());

        assertThatThrownBy(db::init).isInstanceOf(DBException.class).hasMessageContaining(KvorumDB.URLS);
    }

    @Test
    void initWithABadQuorumFailsNamingTheProperty() {
        KvorumDB db = new KvorumDB();
        Properties p = new Properties();
        p.setProperty(KvorumDB.URLS, node.uri().toString());
        p.setProperty(KvorumDB.ACK, "two");
        db.setProperties(p);

        assertThatThrownBy(db::init).isInstanceOf(DBException.class).hasMessageContaining(KvorumDB.ACK);
        assertThat(SharedClients.references()).isZero();
    }

    private DB open(String urls) {
        return open(urls, Map.of());
    }

    private DB open(String urls, Map<String, String> more) {
        KvorumDB db = new KvorumDB();
        Properties p = new Properties();
        p.setProperty(KvorumDB.URLS, urls);
        p.setProperty(KvorumDB.TIMEOUT_MS, "5000");
        more.forEach(p::setProperty);
        db.setProperties(p);
        try {
            db.init();
        } catch (DBException e) {
            throw new AssertionError(e);
        }
        opened.add(db);
        return db;
    }

    /** Records k00.. of a table, each with its key in field "id". */
    private static void insertTable(DB db, String table, int records) {
        for (int i = 0; i < records; i++) {
            String key = String.format("k%02d", i);
            Map<String, String> record = new LinkedHashMap<>();
            record.put("id", key);
            record.put("field0", "value of " + key);
            assertThat(db.insert(table, key, bytes(record))).isEqualTo(Status.OK);
        }
    }

    private static Map<String, ByteIterator> bytes(Map<String, String> fields) {
        Map<String, ByteIterator> values = new HashMap<>();
        fields.forEach((k, v) -> values.put(k, new StringByteIterator(v)));
        return values;
    }

    private static Map<String, String> strings(Map<String, ByteIterator> values) {
        Map<String, String> s = new HashMap<>();
        values.forEach((k, v) -> s.put(k, new String(v.toArray(), UTF_8)));
        return s;
    }

    /** A stand-in for an overloaded node: every request gets 503 with Retry-After. */
    private static HttpServer answering503() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().add("Retry-After", "1");
            byte[] body = "Overloaded".getBytes(UTF_8);
            exchange.sendResponseHeaders(503, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        return server;
    }
}
