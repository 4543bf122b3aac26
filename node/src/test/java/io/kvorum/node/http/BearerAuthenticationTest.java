package io.kvorum.node.http;

import static io.kvorum.node.http.EmbeddedConnection.HOST;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.http.EmbeddedConnection.Reply;
import io.kvorum.node.security.BearerTokens;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bearer-token gate in the real pipeline: what it lets through to the router and what it
 * answers {@code 401} or {@code 403} itself (docs/operations.md#security), in order with the other
 * requests of a connection. A request with a body is refused from its headers, and closes its
 * connection; the requests sent in one go here have none, but for those with a valid token.
 */
class BearerAuthenticationTest {

    private static final String TOKEN = "s3cr3t-token";

    @TempDir
    Path dir;
    private final List<String> routed = new ArrayList<>();
    private EmbeddedConnection connection;

    @BeforeEach
    void start() throws Exception {
        Path file = dir.resolve("tokens");
        Files.writeString(file, TOKEN + "\n");
        connection = new EmbeddedConnection(this::route, new ByteBudget(1 << 20), BearerTokens.load(file));
    }

    @AfterEach
    void close() {
        connection.close();
    }

    private Answer route(FullHttpRequest request) {
        routed.add(request.method() + " " + request.uri());
        return Answer.now(Responses.text(HttpResponseStatus.OK, "routed"));
    }

    private static String request(String method, String path, String authorization) {
        return method + " " + path + " HTTP/1.1\r\n" + HOST
                + (authorization != null ? "Authorization: " + authorization + "\r\n" : "")
                + (method.equals("PUT") ? "Content-Length: 5\r\n\r\nvalue" : "\r\n");
    }

    /** A request without a body: one without a valid token is refused without closing the connection. */
    private static String bodiless(String method, String path, String authorization) {
        return method + " " + path + " HTTP/1.1\r\n" + HOST
                + (authorization != null ? "Authorization: " + authorization + "\r\n" : "") + "\r\n";
    }

    @Test
    void requestsWithoutAValidTokenAre401AndNeverRouted() {
        connection.send(bodiless("DELETE", "/v0/entity?id=k", null)
                + bodiless("DELETE", "/v0/entity?id=k", "Bearer wrong")
                + request("GET", "/v0/entity?id=k", "Basic " + TOKEN)
                + request("GET", "/metrics", null)
                + request("POST", "/v0/repair", null));

        List<Reply> replies = connection.responses();
        assertThat(replies).extracting(Reply::status).containsOnly(401).hasSize(5);
        assertThat(routed).as("no effect: nothing reached the router").isEmpty();
        assertThat(replies.get(0).headers().get(HttpHeaderNames.WWW_AUTHENTICATE)).isEqualTo("Bearer realm=\"kvorum\"");
        assertThat(replies.get(1).headers().get(HttpHeaderNames.WWW_AUTHENTICATE))
                .isEqualTo("Bearer realm=\"kvorum\", error=\"invalid_token\"");
        assertThat(replies).extracting(Reply::body).noneMatch(body -> body.contains("wrong") || body.contains(TOKEN));
    }

    @Test
    void aValidTokenReachesTheRouterAndStatusNeedsNone() {
        connection.send(request("PUT", "/v0/entity?id=k", "Bearer " + TOKEN)
                + request("GET", "/v0/status", null)
                + request("GET", "/v0/status?verbose=1", null)
                + bodiless("PUT", "/v0/status", null)
                + request("GET", "/v0/cluster", null));

        assertThat(connection.responses()).extracting(Reply::status).containsExactly(200, 200, 200, 401, 401);
        assertThat(routed).containsExactly("PUT /v0/entity?id=k", "GET /v0/status", "GET /v0/status?verbose=1");
    }

    @Test
    void twoCredentialsAreNoneAndOnlyTheGetOfStatusIsOpen() {
        connection.send("GET /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Authorization: Bearer " + TOKEN + "\r\n"
                + "Authorization: Bearer wrong\r\n\r\n"
                + "GET /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Authorization: Bearer wrong\r\n"
                + "Authorization: Bearer " + TOKEN + "\r\n\r\n");
        List<Reply> replies = connection.responses();
        assertThat(replies).extracting(Reply::status).containsExactly(401, 401);
        assertThat(replies.get(0).body()).isEqualTo("send one Authorization header, not 2\n");

        // docs/operations.md#security: every request but GET /v0/status. Read raw: the decoder here cannot know that a HEAD answer has no body.
        connection.send(request("HEAD", "/v0/status", null));
        assertThat(connection.rawOutput()).startsWith("HTTP/1.1 401 Unauthorized");
        assertThat(routed).as("whichever of the two is valid").isEmpty();
    }

    /** A connection as the gateway builds it on a node that asks for tokens: gated before the body too. */
    private EmbeddedConnection gatewayConnection(ByteBudget budget) throws Exception {
        return new EmbeddedConnection(this::route, budget, BearerTokens.load(dir.resolve("tokens")));
    }

    @Test
    void aBodyWithoutAValidTokenIsRefusedBeforeItIsRead() throws Exception {
        ByteBudget budget = new ByteBudget(1 << 20);
        try (EmbeddedConnection gateway = gatewayConnection(budget)) {
            gateway.send("PUT /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Authorization: Bearer wrong\r\n"
                    + "Content-Length: 1000\r\n\r\n");

            Reply refused = gateway.response();
            assertThat(refused.status()).as("answered with the body still unsent").isEqualTo(401);
            assertThat(refused.headers().get(HttpHeaderNames.WWW_AUTHENTICATE))
                    .isEqualTo("Bearer realm=\"kvorum\", error=\"invalid_token\"");
            assertThat(gateway.isOpen()).isFalse();
            assertThat(budget.held()).isZero();
            assertThat(routed).isEmpty();
        }
    }

    @Test
    void withATokenABodyIsReadAndWithoutABodyTheGateAnswersAndKeepsTheConnection() throws Exception {
        try (EmbeddedConnection gateway = gatewayConnection(new ByteBudget(1 << 20))) {
            gateway.send(request("GET", "/v0/entity?id=k", null));
            assertThat(gateway.response().status()).isEqualTo(401);
            assertThat(gateway.isOpen()).isTrue();

            gateway.send(request("PUT", "/v0/entity?id=k", "Bearer " + TOKEN));
            assertThat(gateway.response().status()).isEqualTo(200);
            assertThat(routed).containsExactly("PUT /v0/entity?id=k");
        }
    }

    @Test
    void aTokenWithoutTheRoleIs403BeforeTheRouterAndBeforeABodyIsRead() throws Exception {
        Files.writeString(dir.resolve("tokens"), TOKEN + "\nreader-token read prometheus\n");
        ByteBudget budget = new ByteBudget(1 << 20);
        try (EmbeddedConnection gateway = gatewayConnection(budget)) {
            gateway.send(request("POST", "/v0/repair", "Bearer reader-token")
                    + request("GET", "/v0/entity?id=k", "Bearer reader-token"));
            List<Reply> replies = gateway.responses();
            assertThat(replies).extracting(Reply::status).containsExactly(403, 200);
            assertThat(replies.get(0).body()).contains("read").contains("admin").doesNotContain("reader-token");
            assertThat(gateway.isOpen()).as("a request without a body keeps its connection").isTrue();

            gateway.send("PUT /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Authorization: Bearer reader-token\r\n"
                    + "Content-Length: 1000\r\n\r\n");
            assertThat(gateway.response().status()).as("answered with the body still unsent").isEqualTo(403);
            assertThat(gateway.isOpen()).isFalse();
            assertThat(budget.held()).isZero();
        }
        assertThat(routed).containsExactly("GET /v0/entity?id=k");
    }
}
