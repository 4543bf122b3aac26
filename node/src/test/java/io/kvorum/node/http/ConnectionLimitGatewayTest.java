package io.kvorum.node.http;

import static io.kvorum.node.http.EmbeddedConnection.HOST;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.http.EmbeddedConnection.Reply;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code --max-connections} through the gateway's real pipeline: a node that serves one connection
 * and answers one refusal at a time. A connection past the limit is answered 503 at its first
 * request, which never reaches the router, and closed; one past the refusals is closed at once;
 * a connection that closes gives its place back.
 */
class ConnectionLimitGatewayTest {

    private final ConnectionLimit limit = new ConnectionLimit(1, 1);
    private final List<String> routed = new ArrayList<>();
    private final List<EmbeddedConnection> connections = new ArrayList<>();

    private Answer route(FullHttpRequest request) {
        routed.add(request.uri());
        return Answer.now(Responses.text(HttpResponseStatus.OK, "served"));
    }

    private EmbeddedConnection connect() {
        EmbeddedConnection c = new EmbeddedConnection(this::route, limit);
        connections.add(c);
        return c;
    }

    private static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\n" + HOST + "\r\n";
    }

    @AfterEach
    void close() {
        connections.forEach(EmbeddedConnection::close);
    }

    @Test
    void aConnectionPastTheLimitIsAnswered503AndClosed() {
        EmbeddedConnection served = connect();
        EmbeddedConnection refused = connect();

        refused.send(get("/refused"));
        Reply reply = refused.response();
        assertThat(reply.status()).isEqualTo(503);
        assertThat(reply.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
        assertThat(reply.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo("close");
        assertThat(reply.body()).contains("limit of 1 client connections", "--max-connections");
        assertThat(refused.isOpen()).isFalse();

        served.send(get("/served"));
        assertThat(served.response().status()).isEqualTo(200);
        assertThat(routed).as("the refused request never reached the router").containsExactly("/served");
        assertThat(limit.refused()).isEqualTo(1);
    }

    @Test
    void aRefusedBodyIsNotRead() {
        connect();
        EmbeddedConnection refused = connect();

        refused.send("PUT /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Content-Length: 100\r\n\r\n" + "x".repeat(40));
        assertThat(refused.response().status()).isEqualTo(503);
        assertThat(refused.isOpen()).isFalse(); // real sockets linger first: ConnectionLimitNodeTest
        assertThat(routed).isEmpty();
    }

    @Test
    void aConnectionPastTheRefusalsIsClosedAtOnceUnanswered() {
        connect();
        EmbeddedConnection refused = connect();
        EmbeddedConnection dropped = connect();

        assertThat(dropped.isOpen()).isFalse();
        assertThat(dropped.responses()).isEmpty();
        assertThat(refused.isOpen()).isTrue();
        assertThat(limit.refused()).isEqualTo(2);
    }

    @Test
    void aSilentRefusedConnectionIsClosedSoonAndItsRefusalFreed() {
        connect();
        EmbeddedConnection silent = connect();

        silent.advanceTimeBy(GatewayChannelInitializer.REFUSED_SECONDS - 1, TimeUnit.SECONDS);
        assertThat(silent.isOpen()).isTrue();
        silent.advanceTimeBy(1, TimeUnit.SECONDS);
        assertThat(silent.isOpen()).isFalse();

        EmbeddedConnection next = connect();
        assertThat(next.isOpen()).as("refused, not dropped: the silent one's refusal is free again").isTrue();
        next.send(get("/next"));
        assertThat(next.response().status()).isEqualTo(503);
    }

    @Test
    void aClosedConnectionGivesItsPlaceBack() {
        EmbeddedConnection first = connect();
        first.send(get("/first"));
        assertThat(first.response().status()).isEqualTo(200);

        first.disconnect();
        EmbeddedConnection second = connect();
        second.send(get("/second"));
        assertThat(second.response().status()).isEqualTo(200);
        assertThat(routed).containsExactly("/first", "/second");
        assertThat(limit.open()).isEqualTo(1);
    }
}
