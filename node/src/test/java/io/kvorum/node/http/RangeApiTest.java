package io.kvorum.node.http;

import static io.kvorum.node.http.HttpAssertions.assertError;
import static io.kvorum.node.http.HttpAssertions.assertStatus;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumException;
import io.kvorum.client.RangeReader;
import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/http-api.md (ranges) on one node: {@code GET /v0/entities?start=S[&end=E]} answers 200 with a chunked
 * stream, one chunk per entry ({@code <key>\n<value>}), in ascending unsigned byte order of keys,
 * from start inclusive to end exclusive, with only the newest value of each key and without
 * deleted ones. Each test gets a fresh node, so "to the last key" means exactly the test's keys.
 *
 * <p>The framing is checked byte for byte over a raw socket; the content through the product's
 * {@link RangeReader}, which also proves the stream ended with its terminating chunk.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RangeApiTest {

    @TempDir
    Path dataDir;
    TestNode node;

    @BeforeEach
    void startNode() throws Exception {
        node = TestNode.start(dataDir);
    }

    @AfterEach
    void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    private void put(String key, byte[] value) {
        node.client().put(key, value).join();
    }

    private void put(String key, String value) {
        put(key, bytes(value));
    }

    /** Writes every entry, at most 64 requests in flight. */
    private void putAll(Map<String, byte[]> entries) {
        List<CompletableFuture<Void>> inFlight = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            inFlight.add(node.client().put(e.getKey(), e.getValue()));
            if (inFlight.size() == 64) {
                CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
                inFlight.clear();
            }
        }
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
    }

    /** The whole range through the Java client; it throws if the terminating chunk is missing. */
    private List<RangeReader.Entry> range(String start, String end) throws IOException {
        List<RangeReader.Entry> entries = new ArrayList<>();
        try (RangeReader reader = node.client().range(start, end)) {
            for (RangeReader.Entry e : reader) {
                entries.add(e);
            }
        }
        return entries;
    }

    private List<String> keys(String start, String end) throws IOException {
        return range(start, end).stream().map(RangeReader.Entry::keyString).toList();
    }

    private static RangeReader.Entry entry(String key, String value) {
        return new RangeReader.Entry(bytes(key), bytes(value));
    }

    /** A whole raw exchange on a new connection that the node closes after the answer. */
    private RawExchange rawGet(String pathAndQuery) throws IOException {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            RawHttp.Head head = raw.readHead();
            return new RawExchange(head, raw.readToEnd());
        }
    }

    private record RawExchange(RawHttp.Head head, byte[] body) {
    }

    /** The exact bytes of a chunked body with one chunk per entry and the terminating chunk. */
    private static byte[] chunked(List<RangeReader.Entry> entries) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (RangeReader.Entry e : entries) {
            int size = e.key().length + 1 + e.value().length;
            out.writeBytes((Integer.toHexString(size) + "\r\n").getBytes(US_ASCII));
            out.writeBytes(e.key());
            out.write('\n');
            out.writeBytes(e.value());
            out.writeBytes("\r\n".getBytes(US_ASCII));
        }
        out.writeBytes("0\r\n\r\n".getBytes(US_ASCII));
        return out.toByteArray();
    }

    // ---- framing ----

    @Test
    void answerIsChunkedWithExactlyOneChunkPerEntryAndATerminatingChunk() throws IOException {
        put("a", "1");
        put("b", "two\nlines");
        put("c", "");
        put("d", "4");
        put("e", "outside the range");

        RawExchange ex = rawGet("/v0/entities?start=a&end=e");
        assertThat(ex.head().status()).isEqualTo(200);
        assertThat(ex.head().header("transfer-encoding")).isEqualToIgnoringCase("chunked");
        assertThat(ex.head().header("content-length")).isNull();
        assertThat(new String(ex.body(), UTF_8)).isEqualTo(new String(chunked(List.of(
                entry("a", "1"), entry("b", "two\nlines"), entry("c", ""), entry("d", "4"))), UTF_8));
    }

    @Test
    void chunkedAnswerAlsoSeenThroughJavaNetHttp() {
        put("a", "1");
        HttpResponse<byte[]> response = node.get("/v0/entities?start=a");
        assertStatus(response, 200);
        assertThat(response.headers().firstValue("transfer-encoding")).hasValueSatisfying(
                te -> assertThat(te).isEqualToIgnoringCase("chunked"));
        assertThat(response.body()).isEqualTo(bytes("a\n1"));
    }

    @Test
    void connectionStaysUsableAfterARangeAnswer() throws IOException {
        put("a", "1");
        put("b", "2");
        try (RawHttp raw = RawHttp.connect(node.address())) {
            for (int i = 0; i < 3; i++) {
                raw.write("GET /v0/entities?start=a HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
                RawHttp.Response r = raw.readResponse();
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.chunks()).extracting(c -> new String(c, UTF_8)).containsExactly("a\n1", "b\n2");
            }
            raw.write("GET /v0/entity?id=b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            assertThat(raw.readResponse().bodyText()).isEqualTo("2");
        }
    }

    // ---- bounds ----

    @Test
    void anHttp10ClientIsToldARangeNeedsHttp11AndKeepsItsConnection() throws IOException {
        put("a", "1");
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("GET /v0/entities?start=a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
            RawHttp.Response r = raw.readResponse();
            assertThat(r.status()).isEqualTo(505);
            assertThat(r.header("transfer-encoding")).as("no chunks to a client that cannot read them").isNull();
            assertThat(r.bodyText()).contains("send it as HTTP/1.1");
            raw.write("GET /v0/entity?id=a HTTP/1.0\r\n\r\n");
            assertThat(raw.readResponse().bodyText()).as("the entity API serves HTTP/1.0").isEqualTo("1");
        }
    }

    @Test
    void startIsInclusiveAndEndExclusive() throws IOException {
        for (String k : List.of("k1", "k2", "k3", "k4", "k5")) {
            put(k, "v" + k);
        }
        assertThat(keys("k2", "k4")).containsExactly("k2", "k3");
        assertThat(keys("k2a", "k4")).as("start between keys").containsExactly("k3");
        assertThat(keys("k2", "k3a")).as("end between keys").containsExactly("k2", "k3");
        assertThat(keys("k", "k2")).containsExactly("k1");
        assertThat(keys("k1", "k6")).containsExactly("k1", "k2", "k3", "k4", "k5");
        assertThat(range("k3", "k4")).containsExactly(entry("k3", "vk3"));
    }

    @Test
    void noEndMeansToTheLastKey() throws IOException {
        for (String k : List.of("k1", "k2", "k3", "z", "\u00ff")) {
            put(k, "v");
        }
        assertThat(keys("k2", null)).containsExactly("k2", "k3", "z", "\u00ff");
        assertThat(keys("\u00ff", null)).containsExactly("\u00ff");
        assertThat(keys("\u0001", null)).hasSize(5);
    }

    @Test
    void endAtOrBeforeStartIsAnEmpty200() throws IOException {
        for (String k : List.of("a", "b", "c", "d")) {
            put(k, "v");
        }
        for (String query : List.of("start=c&end=c", "start=c&end=b", "start=d&end=a", "start=b&end=a0")) {
            RawExchange ex = rawGet("/v0/entities?" + query);
            assertThat(ex.head().status()).as(query).isEqualTo(200);
            assertThat(ex.head().header("transfer-encoding")).as(query).isEqualToIgnoringCase("chunked");
            assertThat(new String(ex.body(), US_ASCII)).as(query).isEqualTo("0\r\n\r\n");
        }
        assertThat(range("c", "c")).isEmpty();
        assertThat(range("d", "a")).isEmpty();
    }

    @Test
    void rangeWithNoMatchingKeysIsAnEmpty200() throws IOException {
        assertThat(range("a", null)).as("empty store").isEmpty();
        put("m", "v");
        assertThat(range("n", null)).as("start after the last key").isEmpty();
        assertThat(range("a", "b")).as("between no keys").isEmpty();
        RawExchange ex = rawGet("/v0/entities?start=n");
        assertThat(ex.head().status()).isEqualTo(200);
        assertThat(new String(ex.body(), US_ASCII)).isEqualTo("0\r\n\r\n");
    }

    @Test
    void missingOrEmptyStartIs400() throws IOException {
        for (String query : List.of("", "?", "?end=b", "?start=", "?start", "?start=&end=b", "?START=a", "?foo=bar")) {
            assertError(node.get("/v0/entities" + query), 400);
        }
        assertThatThrownBy(() -> node.client().range("", null))
                .isInstanceOfSatisfying(KvorumException.class, e -> assertThat(e.status()).isEqualTo(400));
        node.assertServesNewConnections();
    }

    @Test
    void startThatIsNotValidUtf8OrPercentEncodingIs400() throws IOException {
        for (String query : List.of("start=%FF", "start=%C3", "start=%ZZ", "start=a%")) {
            try (RawHttp raw = RawHttp.connect(node.address())) {
                raw.write("GET /v0/entities?" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
                assertError(query, raw.readResponse(), 400);
            }
        }
    }

    // ---- order and content ----

    @Test
    void keysComeInAscendingUnsignedByteOrderWithUtf8AfterAscii() throws IOException {
        List<String> keys = List.of("b", "a", "Z", "0", "~", "\u007f", " x", "é", "кл", "日本", "😀", "a\u0000", "aa",
                "A", "\u00ff", "ab", "\u0001");
        for (String k : keys) {
            put(k, "v:" + k);
        }
        List<String> expected = new ArrayList<>(keys);
        expected.sort(Comparator.comparing(RangeApiTest::bytes, Arrays::compareUnsigned));

        List<RangeReader.Entry> all = range("\u0001", null);
        assertThat(all).extracting(RangeReader.Entry::keyString).containsExactlyElementsOf(expected);
        for (RangeReader.Entry e : all) {
            assertThat(new String(e.value(), UTF_8)).isEqualTo("v:" + e.keyString());
        }
        // In particular, with signed bytes the multi-byte keys would come first.
        int lastAscii = expected.indexOf("\u007f");
        assertThat(expected.subList(lastAscii + 1, expected.size()))
                .allSatisfy(k -> assertThat(bytes(k)[0] & 0xff).isGreaterThanOrEqualTo(0x80));
        // Bounds are compared the same way.
        assertThat(keys("\u0080", null)).containsExactlyElementsOf(expected.subList(lastAscii + 1, expected.size()));
        assertThat(keys("\u0001", "\u0080")).containsExactlyElementsOf(expected.subList(0, lastAscii + 1));
    }

    @Test
    void onlyTheNewestValueOfEachKeyAndNoDeletedKeys() throws IOException {
        for (int i = 1; i <= 6; i++) {
            put("k" + i, "v" + i);
        }
        put("k2", "v2b");
        put("k2", "v2c");
        node.client().delete("k3").join();
        node.client().delete("k5").join();
        node.client().delete("k4").join();
        put("k4", "v4-again");
        node.client().delete("never-written").join();

        assertThat(range("k", null)).containsExactly(
                entry("k1", "v1"), entry("k2", "v2c"), entry("k4", "v4-again"), entry("k6", "v6"));
        assertThat(range("k3", "k4")).as("a range of only deleted keys").isEmpty();
        assertThat(range("n", null)).as("a deleted key that was never written").isEmpty();
    }

    @Test
    void valuesWithNewlinesEmptyValuesAndBinaryValuesComeBackExactly() throws IOException {
        byte[] everyByte = new byte[256];
        for (int i = 0; i < 256; i++) {
            everyByte[i] = (byte) i;
        }
        Map<String, byte[]> entries = new LinkedHashMap<>();
        entries.put("v1-newlines", bytes("line1\nline2\n"));
        entries.put("v2-only-newline", bytes("\n"));
        entries.put("v3-empty", new byte[0]);
        entries.put("v4-looks-like-framing", bytes("\r\n0\r\n\r\nnext\nvalue"));
        entries.put("v5-binary", everyByte);
        entries.put("v6-empty-again", new byte[0]);
        entries.forEach(this::put);

        List<RangeReader.Entry> expected = entries.entrySet().stream()
                .map(e -> new RangeReader.Entry(bytes(e.getKey()), e.getValue())).toList();
        assertThat(range("v", null)).containsExactlyElementsOf(expected);
        assertThat(rawGet("/v0/entities?start=v").body()).isEqualTo(chunked(expected));
    }

    @Test
    void keyHoldingANewlineIsServedByTheEntityApiAndLeftOutOfRanges() throws IOException {
        put("a", "1");
        put("b\nc", "framing would be ambiguous");
        put("d", "4");
        assertThat(node.client().get("b\nc").join()).hasValue(bytes("framing would be ambiguous"));
        assertThat(range("a", null)).containsExactly(entry("a", "1"), entry("d", "4"));
    }

    @Test
    void rangesIgnoreAckFromAndReplicas() throws IOException {
        put("a", "1");
        put("b", "2");
        byte[] expected = chunked(List.of(entry("a", "1"), entry("b", "2")));
        // On an entity request each of these would be a 400 on one node.
        for (String q : List.of("ack=3&from=5", "from=2", "ack=2&from=1", "replicas=9/9", "replicas=1/1&ack=1",
                "ack=0", "from=abc", "foo=bar")) {
            RawExchange ex = rawGet("/v0/entities?start=a&" + q);
            assertThat(ex.head().status()).as(q).isEqualTo(200);
            assertThat(ex.body()).as(q).isEqualTo(expected);
        }
    }

    @Test
    void ttlOnARangeIs400() {
        put("a", "1");
        assertError(node.get("/v0/entities?start=a&ttl=1000"), 400);
        assertError(node.get("/v0/entities?start=a&end=b&ttl=5"), 400);
    }

    // ---- size ----

    @Test
    void rangeOfThousandsOfEntriesAcrossManyBatchesIsCompleteAndInOrder() throws IOException {
        // 3,000 entries of up to 2 KiB: many internal batches, by count and by bytes.
        Map<String, byte[]> entries = new LinkedHashMap<>();
        for (int i = 0; i < 3000; i++) {
            byte[] value = new byte[(i * 37) % 2048];
            Arrays.fill(value, (byte) ('a' + i % 26));
            entries.put(String.format("r%05d", i), value);
        }
        putAll(entries);

        List<RangeReader.Entry> all = range("r", null);
        assertThat(all).hasSize(3000);
        int i = 0;
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            RangeReader.Entry got = all.get(i++);
            assertThat(got.keyString()).isEqualTo(e.getKey());
            assertThat(got.value()).as("value of %s", e.getKey()).isEqualTo(e.getValue());
        }
        assertThat(keys("r01000", "r02000")).hasSize(1000).first().isEqualTo("r01000");

        // Deleting a run longer than a batch in the middle leaves a gap, not an early end.
        for (int d = 500; d < 1500; d++) {
            node.client().delete(String.format("r%05d", d)).join();
        }
        List<String> afterDelete = keys("r", null);
        assertThat(afterDelete).hasSize(2000);
        assertThat(afterDelete.get(499)).isEqualTo("r00499");
        assertThat(afterDelete.get(500)).isEqualTo("r01500");
        assertThat(afterDelete.get(1999)).isEqualTo("r02999");
    }
}
