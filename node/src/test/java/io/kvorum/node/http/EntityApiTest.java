package io.kvorum.node.http;

import static io.kvorum.node.http.HttpAssertions.assertError;
import static io.kvorum.node.http.HttpAssertions.assertStatus;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/http-api.md, entity API and the other endpoints, on one node: every success and error row, key
 * decoding, the {@code ack}/{@code from}/{@code replicas}/{@code ttl} parameters, body limits
 * and the plain-text error bodies.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EntityApiTest {

    private static final int FOUR_MIB = 4 * 1024 * 1024;

    @TempDir
    static Path dataDir;
    static TestNode node;

    private String prefix;

    @BeforeAll
    static void startNode() throws Exception {
        node = TestNode.start(dataDir);
    }

    @AfterAll
    static void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    @BeforeEach
    void keyPrefix(TestInfo info) {
        // Every test writes its own keys, so tests never see each other's data.
        prefix = info.getTestMethod().orElseThrow().getName() + "-";
    }

    private String key(String suffix) {
        return prefix + suffix;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    // ---- the basic rows: PUT 201, GET 200 / 404, DELETE 202 ----

    @Test
    void putGetDeleteFollowTheStatusTable() {
        String id = "/v0/entity?id=" + key("k");

        HttpResponse<byte[]> put = node.put(id, bytes("v1"));
        assertStatus(put, 201);

        HttpResponse<byte[]> get = node.get(id);
        assertStatus(get, 200);
        assertThat(get.body()).isEqualTo(bytes("v1"));

        assertStatus(node.delete(id), 202);
        assertError(node.get(id), 404);
    }

    @Test
    void keyNeverWrittenIs404() {
        assertError(node.get("/v0/entity?id=" + key("never")), 404);
    }

    @Test
    void deletingAKeyNeverWrittenIsAccepted() {
        String id = "/v0/entity?id=" + key("never");
        assertStatus(node.delete(id), 202);
        assertError(node.get(id), 404);
    }

    @Test
    void overwriteReturnsTheNewestValue() {
        String id = "/v0/entity?id=" + key("k");
        for (int i = 1; i <= 5; i++) {
            assertStatus(node.put(id, bytes("v" + i)), 201);
        }
        assertThat(node.get(id).body()).isEqualTo(bytes("v5"));
    }

    @Test
    void keyCanBeCreatedAgainAfterDelete() {
        String id = "/v0/entity?id=" + key("k");
        assertStatus(node.put(id, bytes("first")), 201);
        assertStatus(node.delete(id), 202);
        assertStatus(node.put(id, bytes("second")), 201);

        HttpResponse<byte[]> get = node.get(id);
        assertStatus(get, 200);
        assertThat(get.body()).isEqualTo(bytes("second"));
    }

    @Test
    void emptyValueIsAValueNotAnAbsence() {
        String id = "/v0/entity?id=" + key("k");
        assertStatus(node.put(id, new byte[0]), 201);

        HttpResponse<byte[]> get = node.get(id);
        assertStatus(get, 200);
        assertThat(get.body()).isEmpty();
        assertThat(get.headers().firstValueAsLong("content-length")).hasValue(0);
        assertThat(node.client().get(key("k")).join()).hasValueSatisfying(v -> assertThat(v).isEmpty());

        assertStatus(node.delete(id), 202);
        assertError(node.get(id), 404);
        assertThat(node.client().get(key("k")).join()).isEmpty();
    }

    @Test
    void binaryValueWithEveryByteSurvivesTheRoundTrip() {
        byte[] value = new byte[256 * 4];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) (i < 512 ? i : 255 - i); // every byte ascending, then descending
        }
        String id = "/v0/entity?id=" + key("bin");
        assertStatus(node.put(id, value), 201);

        HttpResponse<byte[]> get = node.get(id);
        assertStatus(get, 200);
        assertThat(get.body()).isEqualTo(value);
    }

    // ---- key decoding ----

    @Test
    void plusAndPercent20AreTheSameKeyButPercent2BIsNot() {
        String plus = "/v0/entity?id=" + key("a+b");
        String pct20 = "/v0/entity?id=" + key("a%20b");
        String pct2B = "/v0/entity?id=" + key("a%2Bb");

        assertStatus(node.put(plus, bytes("space")), 201);
        assertThat(node.get(pct20).body()).isEqualTo(bytes("space"));
        assertThat(node.client().get(key("a b")).join()).hasValue(bytes("space"));
        assertError(node.get(pct2B), 404);

        assertStatus(node.put(pct2B, bytes("plus")), 201);
        assertThat(node.get(pct2B).body()).isEqualTo(bytes("plus"));
        assertThat(node.client().get(key("a+b")).join()).hasValue(bytes("plus"));
        assertThat(node.get(plus).body()).as("the space key is untouched").isEqualTo(bytes("space"));

        assertStatus(node.delete(pct20), 202);
        assertError(node.get(plus), 404);
        assertThat(node.get(pct2B).body()).isEqualTo(bytes("plus"));
    }

    @Test
    void utf8MultibyteKeyIsDecodedAsUtf8() {
        assertStatus(node.put("/v0/entity?id=" + key("%D0%BA%D0%BB"), bytes("cyrillic")), 201);
        assertThat(node.client().get(key("кл")).join()).hasValue(bytes("cyrillic"));
        // The raw bytes, without the UTF-8 decoding step, name the same key.
        assertThat(node.client().get(bytes(key("кл")), KvorumClient.Options.DEFAULT).join()).hasValue(bytes("cyrillic"));
        // A different code point is a different key.
        assertError(node.get("/v0/entity?id=" + key("%D0%BA%D0%BC")), 404);
    }

    @Test
    void encodedAmpersandAndEqualsBelongToTheKey() {
        // If %26 and %3D were decoded before splitting, this would read as ack=2 (a 400 on one node).
        String id = "/v0/entity?id=" + key("x%26ack%3D2");
        assertStatus(node.put(id, bytes("amp")), 201);
        assertThat(node.get(id).body()).isEqualTo(bytes("amp"));
        assertThat(node.client().get(key("x&ack=2")).join()).hasValue(bytes("amp"));
        assertError(node.get("/v0/entity?id=" + key("x")), 404);
    }

    @Test
    void keyOf1024BytesIsAcceptedAnd1025IsRejected() {
        String ascii1024 = "k".repeat(1024);
        assertStatus(node.put("/v0/entity?id=" + ascii1024, bytes("max")), 201);
        assertThat(node.get("/v0/entity?id=" + ascii1024).body()).isEqualTo(bytes("max"));

        // Bytes, not characters, count: 512 two-byte characters are 1024 bytes.
        String cyrillic1024 = "%D0%B9".repeat(512);
        assertStatus(node.put("/v0/entity?id=" + cyrillic1024, bytes("max2")), 201);
        assertThat(node.client().get("й".repeat(512)).join()).hasValue(bytes("max2"));

        for (String tooLong : List.of("k".repeat(1025), cyrillic1024 + "k")) {
            String id = "/v0/entity?id=" + tooLong;
            assertError(node.put(id, bytes("x")), 400);
            assertError(node.get(id), 400);
            assertError(node.delete(id), 400);
        }
    }

    @Test
    void invalidPercentEncodingIs400() throws Exception {
        // java.net.URI refuses these, so they go over a raw socket.
        for (String query : List.of("id=%ZZ", "id=abc%", "id=abc%4", "id=%G0", "id=a%2", "id=%%41", "i%d=a")) {
            for (String method : List.of("GET", "PUT", "DELETE")) {
                try (RawHttp raw = RawHttp.connect(node.address())) {
                    raw.write(method + " /v0/entity?" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            + "Content-Length: 0\r\n\r\n");
                    assertError(method + " ?" + query, raw.readResponse(), 400);
                }
            }
        }
        node.assertServesNewConnections();
    }

    @Test
    void invalidUtf8KeyIs400() {
        // A lone 0xFF, a truncated sequence, an overlong '/', a UTF-16 surrogate, a stray continuation byte.
        for (String bad : List.of("%FF", "a%C3", "%C0%AF", "%ED%A0%80", "%80abc", "%F8%88%80%80%80")) {
            String id = "/v0/entity?id=" + key(bad);
            assertError(node.put(id, bytes("x")), 400);
            assertError(node.get(id), 400);
            assertError(node.delete(id), 400);
        }
    }

    @Test
    void missingOrEmptyIdIs400() {
        for (String query : List.of("", "?", "?foo=bar", "?ID=a", "?idx=a", "?id=", "?id", "?id=&foo=bar", "?&&")) {
            String path = "/v0/entity" + query;
            assertError(node.get(path), 400);
            assertError(node.put(path, bytes("x")), 400);
            assertError(node.delete(path), 400);
        }
    }

    @Test
    void repeatedIdIs400RatherThanAGuess() {
        assertError(node.put("/v0/entity?id=" + key("a") + "&id=" + key("b"), bytes("x")), 400);
        assertError(node.get("/v0/entity?id=" + key("a")), 404);
        assertError(node.get("/v0/entity?id=" + key("b")), 404);
    }

    // ---- ack / from / replicas ----

    @Test
    void ackAndFromWithinTheClusterAreAccepted() {
        for (String quorum : List.of("ack=1&from=1", "from=1&ack=1", "ack=1", "from=1", "replicas=1/1", "replicas=1%2F1")) {
            String id = "/v0/entity?id=" + key("q") + "&" + quorum;
            assertStatus(node.put(id, bytes(quorum)), 201);
            HttpResponse<byte[]> get = node.get(id);
            assertStatus(get, 200);
            assertThat(get.body()).isEqualTo(bytes(quorum));
            assertStatus(node.delete(id), 202);
            assertError(node.get(id), 404);
        }
        // The Java client sends ack/from as well.
        KvorumClient.Options oneOfOne = KvorumClient.Options.quorum(1, 1);
        node.client().put(key("client"), bytes("c"), oneOfOne).join();
        assertThat(node.client().get(key("client"), oneOfOne).join()).hasValue(bytes("c"));
        node.client().delete(key("client"), oneOfOne).join();
        assertThat(node.client().get(key("client"), oneOfOne).join()).isEmpty();
    }

    @Test
    void invalidAckFromOrReplicasIs400AndHasNoEffect() {
        List<String> invalid = List.of(
                "from=2", // more than the cluster's one node
                "ack=2&from=1", "ack=2", "ack=2&from=2", // ack > from (the default from is 1 here)
                "ack=0", "from=0", "ack=0&from=1", "from=-1", "ack=-1", "from=abc", "ack=abc", "ack=1.0", "ack=1x",
                "ack=+1", "ack=%2B1", "ack=0x1", "from=99999999999999999999",
                "ack=", "from=", "ack=&from=1", "ack=1&from=",
                "ack=1&ack=1",
                "replicas=1", "replicas=a/b", "replicas=1/", "replicas=/1", "replicas=0/1", "replicas=2/1",
                "replicas=1/2", "replicas=1/1/1", "replicas=1-1", "replicas=",
                "replicas=1/1&ack=1", "replicas=1/1&from=1", "replicas=1/1&ack=1&from=1");
        for (String quorum : invalid) {
            String id = "/v0/entity?id=" + key("q") + "&" + quorum;
            assertError(node.put(id, bytes("must not be stored")), 400);
            assertError(node.get(id), 400);
            assertError(node.delete(id), 400);
        }
        assertError(node.get("/v0/entity?id=" + key("q")), 404);
    }

    @Test
    void unknownParametersAreIgnored() {
        for (String extra : List.of("foo=bar", "foo=", "foo", "x=1&y=2", "ACK=5", "start=a", "end=b", "", "&")) {
            String id = "/v0/entity?id=" + key("k") + "&" + extra;
            assertStatus(node.put(id, bytes(extra)), 201);
            assertThat(node.get(id).body()).isEqualTo(bytes(extra));
            assertStatus(node.delete(id), 202);
            assertError(node.get(id), 404);
            // Before the id, too.
            String before = "/v0/entity?" + extra + "&id=" + key("k2");
            assertStatus(node.put(before, bytes(extra)), 201);
            assertThat(node.get(before).body()).isEqualTo(bytes(extra));
        }
    }

    // ---- ttl ----

    @Test
    void ttlIsAcceptedOnPut() {
        String id = "/v0/entity?id=" + key("k");
        assertStatus(node.put(id + "&ttl=600000", bytes("lives ten minutes")), 201);
        assertThat(node.get(id).body()).isEqualTo(bytes("lives ten minutes"));
        node.client().put(key("client"), bytes("c"), KvorumClient.Options.DEFAULT.withTtl(Duration.ofMinutes(10))).join();
        assertThat(node.client().get(key("client")).join()).hasValue(bytes("c"));
    }

    @Test
    void ttlOnGetOrDeleteIs400AndHasNoEffect() {
        String id = "/v0/entity?id=" + key("k");
        assertStatus(node.put(id, bytes("kept")), 201);
        assertError(node.get(id + "&ttl=1000"), 400);
        assertError(node.delete(id + "&ttl=1000"), 400);
        assertThat(node.get(id).body()).as("the DELETE with ttl did nothing").isEqualTo(bytes("kept"));
    }

    @Test
    void ttlThatIsNotAPositiveIntegerIs400AndHasNoEffect() {
        String id = "/v0/entity?id=" + key("k");
        for (String ttl : List.of("0", "-5", "x", "", "1.5", "10ms", "+5", "%2B5", "99999999999999999999", "ttl=1&ttl=2")) {
            String query = ttl.startsWith("ttl=") ? ttl : "ttl=" + ttl;
            assertError(node.put(id + "&" + query, bytes("must not be stored")), 400);
        }
        assertError(node.get(id), 404);
    }

    // ---- paths and methods ----

    @Test
    void unknownPathIs400() {
        for (String path : List.of("/", "/v0", "/v0/", "/v0/entity/", "/v0/entity/x?id=a", "/v1/entity?id=a",
                "/V0/ENTITY?id=a", "/v0/entities/x?start=a", "/v0/statuses", "/v0/status/", "/v0//entity?id=a",
                "/v0/entity%3Fid=a", "/favicon.ico")) {
            for (String method : List.of("GET", "PUT", "DELETE", "POST")) {
                assertError(node.send(method, path, "PUT".equals(method) ? bytes("x") : null), 400);
            }
        }
    }

    @Test
    void knownPathWithWrongMethodIs405WithAllow() {
        record Case(String method, String path, List<String> allowed) {
        }
        List<String> entity = List.of("GET", "PUT", "DELETE");
        List<Case> cases = List.of(
                new Case("POST", "/v0/entity?id=" + key("k"), entity),
                new Case("PATCH", "/v0/entity?id=" + key("k"), entity),
                new Case("OPTIONS", "/v0/entity?id=" + key("k"), entity),
                new Case("POST", "/v0/entity", entity),
                new Case("PUT", "/v0/entities?start=a", List.of("GET")),
                new Case("POST", "/v0/entities?start=a", List.of("GET")),
                new Case("DELETE", "/v0/entities?start=a", List.of("GET")),
                new Case("POST", "/v0/status", List.of("GET", "HEAD")),
                new Case("PUT", "/v0/status", List.of("GET", "HEAD")),
                new Case("GET", "/v0/repair", List.of("POST")),
                new Case("PUT", "/v0/repair", List.of("POST")));
        for (Case c : cases) {
            HttpResponse<byte[]> response = node.send(c.method(), c.path(), bytes("body"));
            assertError(response, 405);
            assertThat(allowHeader(response)).as("Allow of %s %s", c.method(), c.path())
                    .containsExactlyInAnyOrderElementsOf(c.allowed());
        }
        // A POST to the entity must not have written anything.
        assertError(node.get("/v0/entity?id=" + key("k")), 404);
    }

    @Test
    void headOnTheEntityIs405WithAllowAndNoBody() throws Exception {
        HttpResponse<byte[]> head = node.send("HEAD", "/v0/entity?id=" + key("k"), null);
        assertStatus(head, 405);
        assertThat(allowHeader(head)).containsExactlyInAnyOrder("GET", "PUT", "DELETE");
        assertThat(head.body()).isEmpty();
        node.assertServesNewConnections();
        assertStatus(node.get("/v0/status"), 200);
    }

    private static List<String> allowHeader(HttpResponse<byte[]> response) {
        String allow = response.headers().firstValue("allow").orElse("");
        return Arrays.stream(allow.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
    }

    // ---- body limits ----

    @Test
    void bodyOfExactly4MiBIsAcceptedAndReadBackIntact() {
        byte[] value = new byte[FOUR_MIB];
        new Random(42).nextBytes(value);
        String id = "/v0/entity?id=" + key("big");
        assertStatus(node.put(id, value), 201);

        HttpResponse<byte[]> get = node.get(id);
        assertStatus(get, 200);
        assertThat(get.body().length).isEqualTo(FOUR_MIB);
        assertThat(Arrays.equals(get.body(), value)).as("the 4 MiB value read back byte for byte").isTrue();
    }

    @Test
    void bodyOneByteOver4MiBIs413AndTheNodeKeepsServing() throws Exception {
        String id = "/v0/entity?id=" + key("huge");
        assertError(node.put(id, new byte[FOUR_MIB + 1]), 413);
        assertError(node.get(id), 404);
        assertStatus(node.put(id, bytes("small")), 201);
        assertThat(node.get(id).body()).isEqualTo(bytes("small"));
        node.assertServesNewConnections();
    }

    @Test
    void oversizedBodyDeclaredByContentLengthIs413BeforeTheBodyIsSent() throws Exception {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT /v0/entity?id=" + key("k") + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                    + (FOUR_MIB + 1) + "\r\n\r\n");
            assertError("PUT with Content-Length 4 MiB + 1", raw.readResponse(), 413);
        }
        assertError(node.get("/v0/entity?id=" + key("k")), 404);
        node.assertServesNewConnections();
    }

    @Test
    void chunkedBodyWithinTheLimitIsAccepted() throws Exception {
        String id = "/v0/entity?id=" + key("k");
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT " + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n1\r\n \r\n6\r\nchunks\r\n0\r\n\r\n");
            assertThat(raw.readResponse().status()).isEqualTo(201);
        }
        assertThat(node.get(id).body()).isEqualTo(bytes("hello chunks"));
    }

    @Test
    void oversizedChunkedBodyIs413() throws Exception {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT /v0/entity?id=" + key("k") + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n");
            byte[] chunk = new byte[64 * 1024];
            String size = Integer.toHexString(chunk.length) + "\r\n";
            // 65 chunks of 64 KiB: over 4 MiB. The node may close before it has read them all.
            try {
                for (int i = 0; i < 65; i++) {
                    raw.write(size);
                    raw.write(chunk);
                    raw.write("\r\n");
                }
                raw.write("0\r\n\r\n");
            } catch (java.io.IOException closedEarly) {
                // expected when the node answered and closed while the body was still coming
            }
            assertError("chunked PUT of 4 MiB + 64 KiB", raw.readResponse(), 413);
        }
        assertError(node.get("/v0/entity?id=" + key("k")), 404);
        node.assertServesNewConnections();
    }

    @Test
    void oversizedBodyWithExpectContinueIs413WithATextBody() throws Exception {
        // curl sends "Expect: 100-continue" for large uploads; the refusal is an error like any other.
        // (Over a raw socket: JDK 17's HttpClient never completes an expect-continue exchange whose
        // final answer has a body, whatever the server.)
        String id = "/v0/entity?id=" + key("k");
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT " + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: "
                    + (FOUR_MIB + 1) + "\r\n\r\n");
            assertError("PUT of 4 MiB + 1 with Expect: 100-continue", raw.readResponse(), 413);
            assertThat(raw.closedByPeer()).as("the body never came, so the connection cannot be reused").isTrue();
        }
        assertError(node.get(id), 404);

        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT " + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
            assertThat(raw.readResponse().status()).as("interim answer").isEqualTo(100);
            raw.write("fits");
            assertThat(raw.readResponse().status()).isEqualTo(201);
        }
        assertThat(node.get(id).body()).isEqualTo(bytes("fits"));
    }

    @Test
    void aWriteWithExpectContinueAndABadQueryIsRefusedBeforeItsBody() throws Exception {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT /v0/entity?id=" + key("k") + "&ack=2&from=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Expect: 100-continue\r\nContent-Length: " + FOUR_MIB + "\r\n\r\n");
            assertError("a PUT whose ack is over its from, waiting for 100 Continue", raw.readResponse(), 400);
            assertThat(raw.closedByPeer()).as("the body never came, so the connection cannot be reused").isTrue();
        }
        node.assertServesNewConnections();
    }

    @Test
    void unsupportedExpectationIs417WithATextBody() throws Exception {
        String id = "/v0/entity?id=" + key("k");
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT " + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: teapot\r\nContent-Length: 1\r\n\r\n");
            assertError("PUT with Expect: teapot", raw.readResponse(), 417);
        }
        assertError(node.get(id), 404);
        node.assertServesNewConnections();
    }

    @Test
    void smallerMaxValueBytesIsHonoured(@TempDir Path otherDir) throws Exception {
        try (TestNode small = TestNode.start(otherDir, Map.of(NodeOption.MAX_VALUE_BYTES, "1000"))) {
            assertStatus(small.put("/v0/entity?id=fits", new byte[1000]), 201);
            assertThat(small.get("/v0/entity?id=fits").body()).hasSize(1000);
            assertError(small.put("/v0/entity?id=over", new byte[1001]), 413);
            assertError(small.get("/v0/entity?id=over"), 404);
            small.assertServesNewConnections();
        }
    }

    @Test
    void aBodyOnGetOrDeleteIsIgnored() {
        String id = "/v0/entity?id=" + key("k");
        assertStatus(node.put(id, bytes("v")), 201);
        HttpResponse<byte[]> get = node.send("GET", id, bytes("ignored"));
        assertStatus(get, 200);
        assertThat(get.body()).isEqualTo(bytes("v"));
        assertStatus(node.send("DELETE", id, bytes("ignored")), 202);
        assertError(node.get(id), 404);
    }

    // ---- status and repair ----

    @Test
    void statusIs200() {
        HttpResponse<byte[]> status = node.get("/v0/status");
        assertStatus(status, 200);
        assertThat(node.client().isReady().join()).isTrue();
    }

    /** docs/http-api.md: a single node's status has these fields, in this order, and no peers or hints. */
    @Test
    void statusOfOneNodeIsTheDocumentedJson() {
        JsonObject status = json(node.get("/v0/status"));
        assertThat(status.keySet()).containsExactly("node", "status", "clusterSize", "replicationFactor", "storageBytes");
        assertThat(status.get("node").getAsString()).isEqualTo(node.node().config().self().id());
        assertThat(status.get("status").getAsString()).isEqualTo("serving");
        assertThat(status.get("clusterSize").getAsJsonPrimitive().isNumber()).isTrue();
        assertThat(status.get("clusterSize").getAsInt()).isEqualTo(1);
        assertThat(status.get("replicationFactor").getAsInt()).isEqualTo(1);
        assertThat(status.get("storageBytes").getAsLong()).isNotNegative();
    }

    /** docs/http-api.md: no peers, so nothing compared, at once; numbers are JSON numbers. */
    @Test
    void repairOnOneNodeIs200WithAJsonSummary() {
        JsonObject summary = json(node.send("POST", "/v0/repair", null));
        assertThat(summary.keySet()).containsExactly("peers", "unreachable", "bucketsCompared", "bucketsDiffering",
                "recordsSent", "recordsReceived", "bytesSent", "bytesReceived", "durationMs", "trees");
        assertThat(summary.get("trees").getAsString()).as("a single node keeps no trees").isEqualTo("none");
        assertThat(summary.getAsJsonArray("peers")).isEmpty();
        assertThat(summary.getAsJsonArray("unreachable")).isEmpty();
        for (String count : List.of("bucketsCompared", "bucketsDiffering", "recordsSent", "recordsReceived",
                "bytesSent", "bytesReceived")) {
            assertThat(summary.get(count).getAsJsonPrimitive().isNumber()).as(count).isTrue();
            assertThat(summary.get(count).getAsLong()).as(count).isZero();
        }
        assertThat(summary.get("durationMs").getAsLong()).isNotNegative();
    }

    /** A 200 with an {@code application/json} body of one line holding one object. */
    private static JsonObject json(HttpResponse<byte[]> response) {
        assertStatus(response, 200);
        assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
                ct -> assertThat(ct).startsWith("application/json"));
        String body = new String(response.body(), UTF_8);
        assertThat(body).as("one line").endsWith("\n");
        assertThat(body.strip()).as("one line").doesNotContain("\n");
        return JsonParser.parseString(body).getAsJsonObject();
    }
}
