package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.PrometheusText;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --max-connections 1} on a node, over real sockets: a second connection is answered 503,
 * readable although its client is still sending a body, and the request has no effect; the first
 * connection is served throughout, and its place is free again once it closes. The metrics count
 * what happened.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionLimitNodeTest {

    private static final String HOST = "Host: 127.0.0.1\r\n";
    private static final int BODY_BYTES = 1_000_000;

    @TempDir
    Path dir;

    @Test
    void pastItsLimitTheNodeAnswers503AndKeepsServingTheConnectionsItHas() throws Exception {
        try (TestNode node = TestNode.start(dir, Map.of(NodeOption.MAX_CONNECTIONS, "1"))) {
            try (RawHttp served = RawHttp.connect(node.address())) {
                assertThat(exchange(served, "PUT /v0/entity?id=k HTTP/1.1\r\n" + HOST + "Content-Length: 5\r\n\r\nvalue")
                        .status()).isEqualTo(201);

                try (RawHttp refused = RawHttp.connect(node.address())) {
                    refused.write("PUT /v0/entity?id=refused HTTP/1.1\r\n" + HOST + "Content-Length: " + BODY_BYTES
                            + "\r\n\r\n");
                    refused.write(new byte[BODY_BYTES]);
                    RawHttp.Response answer = refused.readResponse();
                    assertThat(answer.status()).isEqualTo(503);
                    assertThat(answer.header("retry-after")).isEqualTo("1");
                    assertThat(answer.bodyText()).contains("limit of 1 client connections", "--max-connections");
                    assertThat(refused.in().read()).as("closed after its answer").isEqualTo(-1);
                }

                assertThat(exchange(served, "GET /v0/entity?id=refused HTTP/1.1\r\n" + HOST + "\r\n").status())
                        .as("the refused write had no effect").isEqualTo(404);
                assertThat(exchange(served, "GET /v0/entity?id=k HTTP/1.1\r\n" + HOST + "\r\n").bodyText())
                        .isEqualTo("value");
                PrometheusText metrics = PrometheusText.parse(exchange(served, "GET /metrics HTTP/1.1\r\n" + HOST + "\r\n").bodyText());
                assertThat(metrics.sum("kvorum_http_connections", Map.of())).isEqualTo(1);
                assertThat(metrics.sum("kvorum_http_connections_limit", Map.of())).isEqualTo(1);
                assertThat(metrics.sum("kvorum_http_connections_refused_total", Map.of())).isEqualTo(1);
            }

            // The node learns of the close asynchronously: until then a new connection is refused.
            TestNode.awaitUntil(Duration.ofSeconds(10), () -> statusOnNewConnection(node) == 200,
                    "a new connection is served once the first has closed");
        }
    }

    private static RawHttp.Response exchange(RawHttp connection, String request) throws IOException {
        connection.write(request);
        return connection.readResponse();
    }

    private static int statusOnNewConnection(TestNode node) {
        try (RawHttp raw = RawHttp.connect(node.address())) {
            return exchange(raw, "GET /v0/status HTTP/1.1\r\n" + HOST + "Connection: close\r\n\r\n").status();
        } catch (IOException e) {
            return -1;
        }
    }
}
