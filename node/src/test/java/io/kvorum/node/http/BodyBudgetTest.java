package io.kvorum.node.http;

import static io.kvorum.node.http.EmbeddedConnection.HOST;
import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway-wide bound on request bodies ({@link ByteBudget}, {@link BodyAdmissionHandler})
 * through the real pipeline: two connections share a budget of 1,500 bytes. A body is held from
 * its headers to its answer; a request whose body does not fit is answered 503 without its body
 * being read, and nothing it sent is lost or left held.
 */
class BodyBudgetTest {

    private static final int BUDGET = 1500;

    private final ByteBudget budget = new ByteBudget(BUDGET);
    private final Map<String, CompletableFuture<FullHttpResponse>> pending = new HashMap<>();
    private final List<String> routedBodies = new ArrayList<>();
    private final EmbeddedConnection first = new EmbeddedConnection(this::route, budget, null);
    private final EmbeddedConnection second = new EmbeddedConnection(this::route, budget, null);

    /** Every request waits for {@link #answer} of its path; its body is remembered. */
    private Answer route(FullHttpRequest request) {
        routedBodies.add(request.content().toString(StandardCharsets.UTF_8));
        CompletableFuture<FullHttpResponse> answer = new CompletableFuture<>();
        pending.put(request.uri(), answer);
        return Answer.later(answer);
    }

    private void answer(String path) {
        pending.remove(path).complete(Responses.text(HttpResponseStatus.CREATED, "stored"));
    }

    private static String putHead(String path, int length) {
        return "PUT " + path + " HTTP/1.1\r\n" + HOST + "Content-Length: " + length + "\r\n\r\n";
    }

    @AfterEach
    void close() {
        first.close();
        second.close();
    }

    @Test
    void aBodyIsHeldFromItsHeadersToItsAnswer() {
        first.send(putHead("/a", 600) + "x".repeat(100));
        assertThat(budget.held()).as("reserved at the headers, before the body").isEqualTo(600);

        first.send("x".repeat(500));
        assertThat(routedBodies).containsExactly("x".repeat(600));
        assertThat(budget.held()).as("routed, not yet answered").isEqualTo(600);

        answer("/a");
        assertThat(first.response().status()).isEqualTo(201);
        assertThat(budget.held()).isZero();
    }

    @Test
    void aBodyThatDoesNotFitIsRefusedBeforeItIsReadAndTheConnectionCloses() {
        first.send(putHead("/a", 600) + "x".repeat(10)); // a slow client holds 600
        second.send(putHead("/b", 1000) + "y".repeat(1000));

        Reply refused = second.response();
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
        assertThat(refused.body()).contains("Overloaded").contains("limit of 1500 bytes");
        assertThat(second.isOpen()).isFalse();
        assertThat(routedBodies).as("the refused request never reached the router").isEmpty();
        assertThat(budget.held()).as("only the first body is held").isEqualTo(600);
    }

    @Test
    void whatAClosedConnectionHeldIsGivenBack() {
        first.send(putHead("/a", 600) + "x".repeat(10));
        assertThat(budget.held()).isEqualTo(600);
        first.disconnect();
        assertThat(budget.held()).isZero();

        second.send(putHead("/b", 900) + "y".repeat(900));
        assertThat(routedBodies).containsExactly("y".repeat(900));
    }

    @Test
    void pipelinedRequestsEachHoldTheirBodyUntilTheirOwnAnswer() {
        first.send(putHead("/a", 300) + "a".repeat(300) + putHead("/b", 400) + "b".repeat(400));
        assertThat(budget.held()).isEqualTo(700);

        answer("/a");
        assertThat(first.response().status()).isEqualTo(201);
        assertThat(budget.held()).as("/b still waits for its answer").isEqualTo(400);
        answer("/b");
        assertThat(first.response().status()).isEqualTo(201);
        assertThat(budget.held()).isZero();
    }

    @Test
    void requestsWithoutABodyAndRefusedBodiesHoldNothing() {
        first.send("GET /g HTTP/1.1\r\n" + HOST + "\r\n");
        assertThat(budget.held()).isZero();
        answer("/g");
        assertThat(first.response().status()).isEqualTo(201);

        // Over --max-value-bytes: the aggregator refuses it (413) without reading it.
        first.send(putHead("/big", EmbeddedConnection.MAX_VALUE_BYTES + 1));
        assertThat(first.response().status()).isEqualTo(413);
        assertThat(budget.held()).isZero();
    }

    @Test
    void aRefusedExpectContinueRequestIsAnsweredWithoutAskingForItsBody() {
        first.send(putHead("/a", 600));
        second.send("PUT /b HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: 1000\r\n\r\n");

        List<Reply> replies = second.responses();
        assertThat(replies).extracting(Reply::status).containsExactly(503);
        assertThat(second.isOpen()).isFalse();
    }

    @Test
    void anAcceptedExpectContinueRequestIsHeldOnceAndGivenBackByItsFinalAnswer() {
        first.send("PUT /a HTTP/1.1\r\n" + HOST + "Expect: 100-continue\r\nContent-Length: 600\r\n\r\n");
        assertThat(first.responses()).extracting(Reply::status).containsExactly(100);
        assertThat(budget.held()).as("a 100 Continue is no answer").isEqualTo(600);

        first.send("x".repeat(600));
        answer("/a");
        assertThat(first.response().status()).isEqualTo(201);
        assertThat(budget.held()).isZero();
    }

    @Test
    void aChunkedBodyHoldsTheLargestAllowedSizeUntilItsAnswer() {
        first.send("PUT /c HTTP/1.1\r\n" + HOST + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        assertThat(routedBodies).containsExactly("hello");
        assertThat(budget.held()).isEqualTo(EmbeddedConnection.MAX_VALUE_BYTES);
        answer("/c");
        assertThat(first.response().status()).isEqualTo(201);
        assertThat(budget.held()).isZero();
    }

    @Test
    void aBodyThatStallsClosesItsConnectionAfterTheBodyTimeout() {
        first.send(putHead("/a", 600) + "x".repeat(10));
        first.advanceTimeBy(BodyAdmissionHandler.REQUEST_SECONDS - 1, TimeUnit.SECONDS);
        assertThat(first.isOpen()).isTrue();

        first.advanceTimeBy(2, TimeUnit.SECONDS);
        assertThat(first.isOpen()).isFalse();
        assertThat(budget.held()).isZero();
    }

    @Test
    void aBodyThatKeepsComingInTimeIsNotCutOff() {
        first.send(putHead("/a", 600) + "x".repeat(10));
        first.advanceTimeBy(BodyAdmissionHandler.REQUEST_SECONDS - 1, TimeUnit.SECONDS);
        first.send("x".repeat(590));
        first.advanceTimeBy(BodyAdmissionHandler.REQUEST_SECONDS, TimeUnit.SECONDS);

        assertThat(first.isOpen()).isTrue();
        assertThat(routedBodies).containsExactly("x".repeat(600));
    }

    @Test
    void aRequestHeadThatStallsHalfSentClosesItsConnectionToo() {
        first.send("PUT /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Content-Len");
        first.advanceTimeBy(BodyAdmissionHandler.REQUEST_SECONDS - 1, TimeUnit.SECONDS);
        assertThat(first.isOpen()).isTrue();

        first.advanceTimeBy(2, TimeUnit.SECONDS);
        assertThat(first.isOpen()).isFalse();
    }

    @Test
    void anIdleConnectionBetweenRequestsIsLeftToTheIdleTimeout() {
        first.send("GET /g HTTP/1.1\r\n" + HOST + "\r\n");
        answer("/g");
        assertThat(first.response().status()).isEqualTo(201);

        first.advanceTimeBy(3L * BodyAdmissionHandler.REQUEST_SECONDS, TimeUnit.SECONDS);
        assertThat(first.isOpen()).isTrue();
    }
}
