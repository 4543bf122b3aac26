package io.kvorum.node.http;

import static io.kvorum.node.http.HttpAssertions.assertError;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/http-api.md: "No request, however malformed, may crash a node, leak memory, or block other
 * requests." Each case talks to the node over a raw socket with a read timeout (so a node that
 * never answers fails the test), expects a 4xx answer where a complete request was sent, and
 * after each test checks that the node answers a new client. Leaks are caught by
 * {@link TestNode#close()} under Netty's paranoid leak detection.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MalformedInputTest {

    private static final String HOST = "Host: 127.0.0.1\r\n";

    @TempDir
    static Path dataDir;
    static TestNode node;

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

    @AfterEach
    void nodeStillServesOthers() throws IOException {
        node.assertServesNewConnections();
        assertThat(node.client().isReady().join()).isTrue();
    }

    /** Sends {@code request} in one write and reads the single answer. */
    private static RawHttp.Response exchange(byte[] request) throws IOException {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write(request);
            return raw.readResponse();
        }
    }

    private static RawHttp.Response exchange(String request) throws IOException {
        return exchange(request.getBytes(ISO_8859_1));
    }

    private static void assertRefused(String what, RawHttp.Response response) {
        assertThat(response.status()).as("answer to %s (body: %s)", what, response.bodyText())
                .isIn(400, 413, 414, 417, 431);
        assertError(what, response, response.status());
    }

    /** Deliberate pacing of a test client; never a stand-in for waiting on a condition. */
    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Writes {@code bytes} on a background thread, ignoring a node that closes before taking them all. */
    private static CompletableFuture<Void> writeInBackground(RawHttp raw, byte[] bytes) {
        return CompletableFuture.runAsync(() -> {
            try {
                raw.write(bytes);
            } catch (IOException closedByNode) {
                // the node may answer and close before it has read everything: that is fine
            }
        });
    }

    // ---- garbage ----

    @Test
    void randomBytesAreRefusedWith4xx() throws IOException {
        Random random = new Random(20240607L);
        for (int round = 0; round < 5; round++) {
            byte[] garbage = new byte[4096];
            random.nextBytes(garbage);
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.writeBytes(garbage);
            request.writeBytes("\r\n\r\n".getBytes(ISO_8859_1));
            assertRefused("4 KiB of random bytes (round " + round + ")", exchange(request.toByteArray()));
        }
    }

    @Test
    void textThatIsNotHttpIsRefusedWith4xx() throws IOException {
        for (String junk : List.of(
                "hello\r\n\r\n",
                "GET\r\n\r\n",
                "GET /v0/status HTTP/9.9.9\r\n\r\n",
                "GET /v0/status FTP/1.0\r\n\r\n",
                "\u00ff\u00fe\u00fd /v0/status HTTP/1.1\r\n\r\n",
                "{\"json\": true}\r\n\r\n")) {
            assertRefused(junk.strip(), exchange(junk));
        }
    }

    @Test
    void tlsClientHelloOnThePlainPortIsRefusedOrClosedNeverAnsweredWith5xx() throws IOException {
        // The start of a TLS 1.2 ClientHello, as sent by an https:// client to this plain-HTTP port.
        byte[] hello = {0x16, 0x03, 0x01, 0x00, (byte) 0xa5, 0x01, 0x00, 0x00, (byte) 0xa1, 0x03, 0x03,
                0x5b, (byte) 0x90, 0x1f, 0x2c, 0x44, 0x72, 0x6f, 0x0a, 0x13, 0x37, 0x00, 0x00, 0x20};
        try (RawHttp raw = RawHttp.connect(node.address(), Duration.ofSeconds(10))) {
            raw.write(hello);
            raw.socket().shutdownOutput(); // a TLS client would now wait; this one gives up
            byte[] answer = raw.readToEnd();
            if (answer.length > 0) {
                String statusLine = new String(answer, ISO_8859_1).lines().findFirst().orElse("");
                assertThat(statusLine).as("answer to a TLS ClientHello").matches("HTTP/1\\.1 4\\d\\d .*");
            }
        }
    }

    // ---- request line and headers ----

    @Test
    void requestLineWithoutHttpVersionIsRefused() throws IOException {
        assertRefused("GET /v0/status (no version)", exchange("GET /v0/status\r\n\r\n"));
        assertRefused("GET /v0/entity?id=a (no version)", exchange("GET /v0/entity?id=a\r\n" + HOST + "\r\n"));
    }

    @Test
    void headerOfOneMebibyteIsRefusedWith431() throws Exception {
        String head = "GET /v0/status HTTP/1.1\r\n" + HOST + "X-Huge: ";
        byte[] huge = new byte[1024 * 1024];
        java.util.Arrays.fill(huge, (byte) 'a');
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write(head);
            CompletableFuture<Void> writing = writeInBackground(raw, concat(huge, "\r\n\r\n".getBytes(ISO_8859_1)));
            RawHttp.Response response = raw.readResponse();
            assertThat(response.status()).isEqualTo(431);
            assertError("a 1 MiB header", response, 431);
            assertThat(raw.closedByPeer()).as("the node closes the connection after refusing it").isTrue();
            writing.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void manyHeadersAddingUpToOneMebibyteAreRefusedWith431() throws Exception {
        StringBuilder headers = new StringBuilder("GET /v0/status HTTP/1.1\r\n" + HOST);
        for (int i = 0; i < 1024; i++) {
            headers.append("X-H").append(i).append(": ").append("v".repeat(1000)).append("\r\n");
        }
        headers.append("\r\n");
        try (RawHttp raw = RawHttp.connect(node.address())) {
            CompletableFuture<Void> writing = writeInBackground(raw, headers.toString().getBytes(ISO_8859_1));
            RawHttp.Response response = raw.readResponse();
            assertError("1024 headers of 1 KB", response, 431);
            writing.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void requestLineOfOneMebibyteIsRefusedWith414() throws Exception {
        byte[] uri = ("GET /v0/entity?id=" + "k".repeat(1024 * 1024) + " HTTP/1.1\r\n" + HOST + "\r\n").getBytes(ISO_8859_1);
        try (RawHttp raw = RawHttp.connect(node.address())) {
            CompletableFuture<Void> writing = writeInBackground(raw, uri);
            assertError("a 1 MiB request line", raw.readResponse(), 414);
            writing.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void badPercentEncodingIsRefusedWith400() throws IOException {
        for (String target : List.of("/v0/entity?id=%", "/v0/entity?id=%E0%A4%A", "/v0/entity?id=%u0041",
                "/v0/entity?id=ok&ack=%", "/v0/entities?start=%XY")) {
            RawHttp.Response response = exchange("GET " + target + " HTTP/1.1\r\n" + HOST + "\r\n");
            assertError(target, response, 400);
        }
    }

    @Test
    void malformedContentLengthOrChunkingIsRefusedWith400() throws IOException {
        for (String request : List.of(
                "PUT /v0/entity?id=cl HTTP/1.1\r\n" + HOST + "Content-Length: abc\r\n\r\n",
                "PUT /v0/entity?id=cl HTTP/1.1\r\n" + HOST + "Content-Length: -1\r\n\r\n",
                "PUT /v0/entity?id=cl HTTP/1.1\r\n" + HOST + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                "PUT /v0/entity?id=cl HTTP/1.1\r\n" + HOST + "Transfer-Encoding: chunked\r\n\r\nZZ\r\nhello\r\n0\r\n\r\n")) {
            assertRefused(request.lines().filter(l -> l.startsWith("Content") || l.startsWith("Transfer"))
                    .toList().toString(), exchange(request));
        }
        assertError(node.get("/v0/entity?id=cl"), 404);
    }

    @Test
    void aRequestInAnHttpVersionOtherThan1IsRefusedWith505() throws IOException {
        for (String version : List.of("HTTP/2.0", "HTTP/9.9", "HTTP/0.9")) {
            RawHttp.Response response = exchange("GET /v0/status " + version + "\r\n" + HOST + "\r\n");
            assertError(version, response, 505);
            assertThat(response.bodyText()).as("the 505's body").contains(version);
        }
    }

    @Test
    void anUnsupportedExpectationIsNamedInIts417() throws IOException {
        RawHttp.Response response = exchange("PUT /v0/entity?id=expect HTTP/1.1\r\n" + HOST
                + "Expect: something-else\r\nContent-Length: 3\r\n\r\nabc");
        assertError("Expect: something-else", response, 417);
        assertThat(response.bodyText()).as("the 417's body").contains("'something-else'");
    }

    // ---- framing of a body (RFC 9112 section 6) ----

    /**
     * Sends a PUT whose body's framing the node must not guess, with a second request right behind
     * it on the connection, and checks that the PUT is refused with {@code status}, that nothing
     * after it is read as a request (a proxy that framed the body otherwise would have smuggled it
     * in), that the connection closes, and that nothing was written.
     */
    private static void assertFramingRefused(String id, String framing, String body, int status) throws IOException {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT /v0/entity?id=" + id + " HTTP/1.1\r\n" + HOST + framing + "\r\n" + body
                    + "GET /v0/status HTTP/1.1\r\n" + HOST + "\r\n");
            RawHttp.Response response = raw.readResponse();
            assertError(framing.strip(), response, status);
            assertThat(new String(raw.readToEnd(), ISO_8859_1)).as("what the node sent after refusing %s", framing.strip())
                    .isEmpty();
        }
        assertError(node.get("/v0/entity?id=" + id), 404);
    }

    @Test
    void transferEncodingThatDoesNotEndInChunkedIsRefusedWith400AndNothingAfterItIsRead() throws IOException {
        assertFramingRefused("te-gzip", "Transfer-Encoding: gzip\r\n", "abc", 400);
        assertFramingRefused("te-identity", "Transfer-Encoding: chunked, identity\r\n", "3\r\nabc\r\n0\r\n\r\n", 400);
        assertFramingRefused("te-twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                "3\r\nabc\r\n0\r\n\r\n", 400);
    }

    @Test
    void aTransferCodingBeforeChunkedIsNotImplemented() throws IOException {
        assertFramingRefused("te-gzip-chunked", "Transfer-Encoding: gzip, chunked\r\n", "3\r\nabc\r\n0\r\n\r\n", 501);
    }

    @Test
    void contentLengthBesideTransferEncodingIsRefusedWith400() throws IOException {
        // A proxy that framed by the length would have sent "0\r\n\r\n" and the GET as one body.
        assertFramingRefused("cl-te", "Transfer-Encoding: chunked\r\nContent-Length: 48\r\n", "0\r\n\r\n", 400);
    }

    @Test
    void chunkedAloneIsReadInAnyCaseAndSpacing() throws IOException {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT /v0/entity?id=te-ok HTTP/1.1\r\n" + HOST + "Transfer-Encoding:  Chunked \r\n\r\n"
                    + "3\r\nabc\r\n0\r\n\r\n");
            assertThat(raw.readResponse().status()).as("PUT with Transfer-Encoding: Chunked").isEqualTo(201);
        }
        assertThat(node.get("/v0/entity?id=te-ok").body()).isEqualTo("abc".getBytes(UTF_8));
    }

    // ---- bodies and pacing ----

    @Test
    void bodyShorterThanItsContentLengthThenCloseWritesNothing() throws IOException {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT /v0/entity?id=short HTTP/1.1\r\n" + HOST + "Content-Length: 100\r\n\r\n0123456789");
        }
        try (RawHttp raw = RawHttp.connect(node.address())) {
            // A large declared body, of which 1 MiB arrives: the partly aggregated body must be released.
            raw.write("PUT /v0/entity?id=short-big HTTP/1.1\r\n" + HOST + "Content-Length: 4194304\r\n\r\n");
            raw.write(new byte[1024 * 1024]);
        }
        node.assertServesNewConnections();
        assertError(node.get("/v0/entity?id=short"), 404);
        assertError(node.get("/v0/entity?id=short-big"), 404);
    }

    @Test
    void slowClientSendingByteByByteIsServedAndBlocksNobody() throws Exception {
        byte[] request = ("PUT /v0/entity?id=slow HTTP/1.1\r\n" + HOST + "Content-Length: 5\r\n\r\nhello").getBytes(ISO_8859_1);
        try (RawHttp raw = RawHttp.connect(node.address())) {
            for (int i = 0; i < request.length; i++) {
                raw.write(new byte[] {request[i]});
                pause(Duration.ofMillis(5)); // about 0.4 s in all
                if (i == request.length / 2) {
                    // Half-way through the slow request, other clients are served.
                    node.assertServesNewConnections();
                    assertThat(node.client().get("never-written").join()).isEmpty();
                }
            }
            RawHttp.Response response = raw.readResponse();
            assertThat(response.status()).isEqualTo(201);
        }
        assertThat(node.get("/v0/entity?id=slow").body()).isEqualTo("hello".getBytes(UTF_8));
    }

    @Test
    void idleHalfOpenConnectionsDoNotBlockOthers() throws IOException {
        // Connections that sent part of a request head and went quiet.
        RawHttp[] idle = new RawHttp[20];
        try {
            for (int i = 0; i < idle.length; i++) {
                idle[i] = RawHttp.connect(node.address());
                idle[i].write("GET /v0/entity?id=idle" + i + " HTTP/1.1\r\nHo");
            }
            node.assertServesNewConnections();
            assertThat(node.client().get("idle").join()).isEmpty();
        } finally {
            for (RawHttp raw : idle) {
                if (raw != null) {
                    raw.close();
                }
            }
        }
    }

    // ---- pipelining ----

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws IOException {
        String requests = "PUT /v0/entity?id=pipe HTTP/1.1\r\n" + HOST + "Content-Length: 3\r\n\r\none"
                + "GET /v0/entity?id=pipe HTTP/1.1\r\n" + HOST + "\r\n"
                + "PUT /v0/entity?id=pipe HTTP/1.1\r\n" + HOST + "Content-Length: 3\r\n\r\ntwo"
                + "GET /v0/entity?id=pipe HTTP/1.1\r\n" + HOST + "\r\n"
                + "GET /nowhere HTTP/1.1\r\n" + HOST + "\r\n"
                + "GET /v0/entities?start=pipe&end=pipe%00 HTTP/1.1\r\n" + HOST + "\r\n"
                + "DELETE /v0/entity?id=pipe HTTP/1.1\r\n" + HOST + "\r\n"
                + "GET /v0/entity?id=pipe HTTP/1.1\r\n" + HOST + "\r\n"
                + "POST /v0/status HTTP/1.1\r\n" + HOST + "Content-Length: 0\r\n\r\n"
                + "GET /v0/status HTTP/1.1\r\n" + HOST + "Connection: close\r\n\r\n";
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write(requests);
            assertThat(raw.readResponse().status()).as("PUT one").isEqualTo(201);
            RawHttp.Response one = raw.readResponse();
            assertThat(one.status()).isEqualTo(200);
            assertThat(one.bodyText()).isEqualTo("one");
            assertThat(raw.readResponse().status()).as("PUT two").isEqualTo(201);
            RawHttp.Response two = raw.readResponse();
            assertThat(two.status()).isEqualTo(200);
            assertThat(two.bodyText()).isEqualTo("two");
            assertThat(raw.readResponse().status()).as("unknown path").isEqualTo(400);
            RawHttp.Response range = raw.readResponse();
            assertThat(range.status()).isEqualTo(200);
            assertThat(range.chunks()).extracting(c -> new String(c, UTF_8)).containsExactly("pipe\ntwo");
            assertThat(raw.readResponse().status()).as("DELETE").isEqualTo(202);
            assertThat(raw.readResponse().status()).as("GET after DELETE").isEqualTo(404);
            RawHttp.Response post = raw.readResponse();
            assertThat(post.status()).as("POST /v0/status").isEqualTo(405);
            assertThat(post.header("allow")).isEqualTo("GET, HEAD");
            assertThat(raw.readResponse().status()).as("GET /v0/status").isEqualTo(200);
            assertThat(raw.closedByPeer()).as("closed after Connection: close").isTrue();
        }
    }

    @Test
    void theAnswerToAHeadHasNoBodyAlsoAfterA100ContinueOnTheConnection() throws IOException {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("PUT /v0/entity?id=head-after-continue HTTP/1.1\r\n" + HOST
                    + "Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc"
                    + "HEAD /metrics HTTP/1.1\r\n" + HOST + "\r\n"
                    + "GET /v0/status HTTP/1.1\r\n" + HOST + "\r\n");
            assertThat(raw.readResponse().status()).as("the interim answer").isEqualTo(100);
            assertThat(raw.readResponse().status()).as("the PUT").isEqualTo(201);
            RawHttp.Head head = raw.readHead();
            assertThat(head.status()).as("the HEAD").isEqualTo(200);
            assertThat(head.header("content-length")).as("the HEAD's length of the body it does not send").isNotNull();
            RawHttp.Response status = raw.readResponse(); // a body sent for the HEAD would be read here
            assertThat(status.status()).as("the GET after the HEAD").isEqualTo(200);
            assertThat(status.bodyText()).contains("\"status\"");
        }
    }

    @Test
    void pipelinedOversizedBodyIsRefusedInItsTurn() throws IOException {
        // The 413 is decided from the head alone, while the GET before it is still being read from
        // storage; it must still come second, or the client pairs each answer with the wrong request.
        assertThat(node.put("/v0/entity?id=pipe-first", "first".getBytes(UTF_8)).statusCode()).isEqualTo(201);
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("GET /v0/entity?id=pipe-first HTTP/1.1\r\n" + HOST + "\r\n"
                    + "PUT /v0/entity?id=pipe-big HTTP/1.1\r\n" + HOST + "Content-Length: " + (4 * 1024 * 1024 + 1)
                    + "\r\n\r\n");
            RawHttp.Response first = raw.readResponse();
            assertThat(first.status()).as("answer to the GET, first in line (body: %s)", first.bodyText()).isEqualTo(200);
            assertThat(first.bodyText()).isEqualTo("first");
            assertError("the oversized PUT", raw.readResponse(), 413);

            // The body was declared by Content-Length, so the node can skip it and keep the connection.
            raw.write(new byte[4 * 1024 * 1024 + 1]);
            raw.write("GET /v0/entity?id=pipe-first HTTP/1.1\r\n" + HOST + "\r\n");
            RawHttp.Response again = raw.readResponse();
            assertThat(again.status()).isEqualTo(200);
            assertThat(again.bodyText()).isEqualTo("first");
        }
        assertError(node.get("/v0/entity?id=pipe-big"), 404);
    }

    @Test
    void malformedRequestInAPipelineIsAnsweredAfterThoseBeforeIt() throws IOException {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            raw.write("GET /v0/entity?id=pipe-x HTTP/1.1\r\n" + HOST + "\r\n"
                    + "GET /v0/status\r\n\r\n");
            assertThat(raw.readResponse().status()).as("the well-formed GET").isEqualTo(404);
            assertRefused("the request line without a version", raw.readResponse());
            assertThat(raw.closedByPeer()).isTrue();
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
