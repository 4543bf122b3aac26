package io.kvorum.node.http;

import static io.kvorum.node.http.EmbeddedConnection.HOST;
import static io.kvorum.node.http.EmbeddedConnection.MAX_VALUE_BYTES;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.http.EmbeddedConnection.Reply;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The connection's side of HTTP ({@link ConnectionHandler} in the real pipeline): one request at a
 * time in arrival order, keep-alive and close, and the answers to requests that failed to decode,
 * with a router whose answers the test completes when it wants.
 */
class ConnectionHandlerTest {

    /** "METHOD path" of every request routed, in order. */
    private final List<String> routed = new ArrayList<>();
    private final Map<String, CompletableFuture<FullHttpResponse>> pending = new HashMap<>();
    private final EmbeddedConnection connection = new EmbeddedConnection(this::route);

    /**
     * {@code /now} answers 200 at once, with the request body if any; {@code /bad} and
     * {@code /boom} throw; any other path waits for {@link #answer}.
     */
    private Answer route(FullHttpRequest request) {
        String path = request.uri();
        routed.add(request.method() + " " + path);
        return switch (path) {
            case "/now" -> Answer.now(Responses.text(HttpResponseStatus.OK,
                    "now " + request.content().toString(StandardCharsets.UTF_8)));
            case "/bad" -> throw new BadRequestException("no good");
            case "/boom" -> throw new IllegalStateException("boom");
            default -> {
                CompletableFuture<FullHttpResponse> answer = new CompletableFuture<>();
                pending.put(path, answer);
                yield Answer.later(answer);
            }
        };
    }

    /** Completes the answer to the request for {@code path}, as a storage thread would. */
    private void answer(String path, String body) {
        assertThat(pending).as("requests routed and waiting").containsKey(path);
        pending.remove(path).complete(Responses.text(HttpResponseStatus.OK, body));
    }

    private static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\n" + HOST + "\r\n";
    }

    @AfterEach
    void close() {
        connection.close();
    }

    @Test
    void pipelinedRequestsAreRoutedOneAtATimeAndAnsweredInArrivalOrder() {
        connection.send(get("/a") + get("/b") + get("/now"));

        assertThat(routed).as("routed while /a is in progress").containsExactly("GET /a");
        assertThat(connection.responses()).isEmpty();
        assertThat(connection.inFlight.count()).as("/a, and the two waiting their turn").isEqualTo(3);

        answer("/a", "A");
        assertThat(connection.responses()).extracting(Reply::body).containsExactly("A\n");
        assertThat(routed).containsExactly("GET /a", "GET /b");

        answer("/b", "B");
        assertThat(connection.responses()).extracting(Reply::body).containsExactly("B\n", "now \n");
        assertThat(connection.inFlight.count()).isZero();
        assertThat(connection.isOpen()).isTrue();
    }

    @Test
    void http11KeepsTheConnectionOpenByDefault() {
        connection.send(get("/now"));
        Reply first = connection.response();
        assertThat(first.status()).isEqualTo(200);
        assertThat(first.headers().get(HttpHeaderNames.CONNECTION)).isNull();
        assertThat(connection.isOpen()).isTrue();

        connection.send(get("/now"));
        assertThat(connection.response().status()).isEqualTo(200);
    }

    @Test
    void connectionCloseClosesAfterTheAnswerAndLaterPipelinedRequestsAreNotRouted() {
        connection.send("GET /a HTTP/1.1\r\n" + HOST + "Connection: close\r\n\r\n" + get("/now"));
        assertThat(connection.isOpen()).as("open while /a is in progress").isTrue();

        answer("/a", "A");
        Reply reply = connection.response();
        assertThat(reply.body()).isEqualTo("A\n");
        assertThat(reply.headers().get(HttpHeaderNames.CONNECTION)).isEqualToIgnoringCase("close");
        assertThat(connection.isOpen()).isFalse();
        assertThat(routed).containsExactly("GET /a");
        assertThat(connection.inFlight.count()).isZero();
    }

    @Test
    void http10ClosesUnlessItAsksForKeepAlive() {
        connection.send("GET /now HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        Reply kept = connection.response();
        assertThat(kept.status()).isEqualTo(200);
        // An HTTP/1.0 client (ApacheBench's -k) closes unless the answer says it stays open.
        assertThat(kept.headers().get(HttpHeaderNames.CONNECTION)).isEqualToIgnoringCase("keep-alive");
        assertThat(connection.isOpen()).isTrue();

        connection.send("GET /now HTTP/1.0\r\n\r\n");
        assertThat(connection.response().status()).isEqualTo(200);
        assertThat(connection.isOpen()).isFalse();
    }

    @Test
    void aRequestThatFailsToDecodeIs400InItsTurnAndClosesTheConnection() {
        connection.send(get("/a") + "GET /now HTTP/9.9.9\r\n" + HOST + "\r\n");
        assertThat(connection.responses()).as("nothing ahead of /a's answer").isEmpty();

        answer("/a", "A");
        List<Reply> replies = connection.responses();
        assertThat(replies).extracting(Reply::status).containsExactly(200, 400);
        assertThat(replies.get(1).body()).startsWith("malformed HTTP request");
        assertThat(connection.isOpen()).isFalse();
        assertThat(routed).containsExactly("GET /a");
    }

    @Test
    void aRequestLineTooLongIs414AndHeadersTooLargeAre431() {
        connection.send("GET /" + "x".repeat(GatewayChannelInitializer.MAX_INITIAL_LINE) + " HTTP/1.1\r\n\r\n");
        assertThat(connection.response().status()).isEqualTo(414);
        assertThat(connection.isOpen()).isFalse();

        try (EmbeddedConnection other = new EmbeddedConnection(this::route)) {
            other.send("GET /now HTTP/1.1\r\n" + HOST + "X-Huge: "
                    + "y".repeat(GatewayChannelInitializer.MAX_HEADER_BYTES) + "\r\n\r\n");
            assertThat(other.response().status()).isEqualTo(431);
            assertThat(other.isOpen()).isFalse();
        }
        assertThat(routed).isEmpty();
    }

    @Test
    void aBodyOverTheLimitIs413InItsTurnAndTheConnectionLivesOn() {
        String tooLarge = "x".repeat(MAX_VALUE_BYTES + 1);
        connection.send(get("/a") + "PUT /now HTTP/1.1\r\n" + HOST + "Content-Length: " + tooLarge.length()
                + "\r\n\r\n" + tooLarge + "PUT /now HTTP/1.1\r\n" + HOST + "Content-Length: 2\r\n\r\nok");
        assertThat(connection.responses()).isEmpty();

        answer("/a", "A");
        List<Reply> replies = connection.responses();
        assertThat(replies).extracting(Reply::status).containsExactly(200, 413, 200);
        assertThat(replies.get(1).body()).isEqualTo("request body is over the limit of " + MAX_VALUE_BYTES + " bytes\n");
        assertThat(replies.get(2).body()).isEqualTo("now ok\n");
        assertThat(routed).containsExactly("GET /a", "PUT /now");
        assertThat(connection.isOpen()).isTrue();
    }

    @Test
    void expect100ContinueIsAnsweredBeforeTheBodyComes() {
        connection.send("PUT /now HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: 5\r\n\r\n");
        assertThat(connection.response().status()).isEqualTo(100);

        connection.send("hello");
        assertThat(connection.response().body()).isEqualTo("now hello\n");
        assertThat(connection.isOpen()).isTrue();
    }

    @Test
    void eachAnswerIsEncodedForItsOwnRequestAfterA100Continue() {
        // The HEAD is decoded while the PUT is in progress: a 100 Continue that took the PUT's
        // place in the codec's queue of methods would make its answer the HEAD's (no body) and the
        // HEAD's answer send a body that the client reads as the next answer.
        connection.send("PUT /a HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: 5\r\n\r\nhello"
                + "HEAD /now HTTP/1.1\r\n" + HOST + "\r\n");
        answer("/a", "put");

        String sent = connection.rawOutput();
        assertThat(sent).startsWith("HTTP/1.1 100 Continue\r\n");
        assertThat(sent).as("the PUT's answer, with its body").contains("\r\n\r\nput\n");
        assertThat(sent).as("the HEAD's answer, headers only").endsWith("content-length: 5\r\n\r\n");
        assertThat(routed).containsExactly("PUT /a", "HEAD /now");
    }

    @Test
    void expect100ContinueOverTheLimitIsRefusedWithATextBodyAndCloses() {
        connection.send("PUT /now HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: "
                + (MAX_VALUE_BYTES + 1) + "\r\n\r\n");
        Reply refused = connection.response();
        assertThat(refused.status()).isEqualTo(413);
        assertThat(refused.body()).isEqualTo("request body is over the limit of " + MAX_VALUE_BYTES + " bytes\n");
        assertThat(connection.isOpen()).isFalse();
        assertThat(routed).isEmpty();
    }

    @Test
    void whatTheRouterThrowsOrFailsWithIsAnsweredAndTheConnectionLivesOn() {
        connection.send(get("/bad") + get("/boom") + get("/a"));
        pending.get("/a").completeExceptionally(new OverloadedException("storage queue full"));

        List<Reply> replies = connection.responses();
        assertThat(replies).extracting(Reply::status).containsExactly(400, 500, 503);
        assertThat(replies.get(0).body()).isEqualTo("no good\n");
        assertThat(replies.get(2).headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo(Responses.RETRY_AFTER_SECONDS);
        assertThat(connection.isOpen()).isTrue();
        assertThat(connection.inFlight.count()).isZero();
    }

    @Test
    void aClientThatGoesAwayNoLongerCountsInFlight() {
        connection.send(get("/a") + get("/b"));
        assertThat(connection.inFlight.count()).isEqualTo(2);

        connection.disconnect();
        assertThat(connection.inFlight.count()).isZero();

        answer("/a", "too late");
        assertThat(connection.responses()).isEmpty();
        assertThat(connection.inFlight.count()).as("the late answer is not counted twice").isZero();
        assertThat(routed).containsExactly("GET /a");
    }

    /** A graceful stop waits for uploads: a request counts as arriving from its headers to its body's last byte. */
    @Test
    void aBodyStillArrivingCountsUntilItIsWholeThenTheRequestIsInFlight() {
        connection.send("PUT /a HTTP/1.1\r\n" + HOST + "Content-Length: 10\r\n\r\n" + "01234");
        assertThat(connection.arriving.count()).as("headers and half the body came").isEqualTo(1);
        assertThat(connection.inFlight.count()).isZero();

        connection.send("56789");
        assertThat(connection.arriving.count()).as("the body is whole").isZero();
        assertThat(connection.inFlight.count()).isEqualTo(1);

        answer("/a", "A");
        assertThat(connection.response().body()).isEqualTo("A\n");
        assertThat(connection.inFlight.count()).isZero();
    }

    @Test
    void aBodyCutShortByItsClientNoLongerCountsAsArriving() {
        connection.send("PUT /a HTTP/1.1\r\n" + HOST + "Content-Length: 10\r\n\r\n" + "01234");
        assertThat(connection.arriving.count()).isEqualTo(1);

        connection.disconnect();
        assertThat(connection.arriving.count()).isZero();
        assertThat(connection.inFlight.count()).isZero();
    }

    @Test
    void aBodyRefusedBeforeItCameNoLongerCountsAsArriving() {
        connection.send("PUT /now HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: "
                + (MAX_VALUE_BYTES + 1) + "\r\n\r\n");
        assertThat(connection.response().status()).isEqualTo(413);
        assertThat(connection.arriving.count()).isZero();
    }
}
