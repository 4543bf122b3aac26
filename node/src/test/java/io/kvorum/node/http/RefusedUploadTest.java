package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request refused from its headers while its client is still sending a large body, over a real
 * socket: the client must be able to read the answer. Had the node closed the connection with
 * the body's bytes unread in its socket, the kernel would have reset it, and the reset can destroy
 * the answer before the client reads it (and fails the client's write of the body).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RefusedUploadTest {

    private static final int BODY_BYTES = 4_000_000;

    @TempDir
    Path dir;

    @Test
    void aClientStillSendingItsBodyReadsThe401() throws Exception {
        Path tokens = Files.writeString(dir.resolve("tokens"), "the-token\n");
        try (TestNode node = TestNode.start(dir.resolve("data"), Map.of(NodeOption.AUTH_TOKEN_FILE, tokens.toString()))) {
            for (int attempt = 0; attempt < 3; attempt++) {
                try (RawHttp client = RawHttp.connect(node.address())) {
                    client.write("PUT /v0/entity?id=big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + BODY_BYTES
                            + "\r\n\r\n");
                    client.write(body());

                    RawHttp.Response answer = client.readResponse();
                    assertThat(answer.status()).isEqualTo(401);
                    assertThat(client.closedByPeer()).isTrue();
                }
            }
        }
    }

    @Test
    void aClientStillSendingABodyOverTheLimitReadsThe413() throws Exception {
        try (TestNode node = TestNode.start(dir.resolve("data"), Map.of(NodeOption.MAX_VALUE_BYTES, "1000"))) {
            for (int attempt = 0; attempt < 3; attempt++) {
                try (RawHttp client = RawHttp.connect(node.address())) {
                    // Connection: close, so the node does not read the body through to keep the connection.
                    client.write("PUT /v0/entity?id=big HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                            + "Content-Length: " + BODY_BYTES + "\r\n\r\n");
                    client.write(body());

                    assertThat(client.readResponse().status()).isEqualTo(413);
                    assertThat(client.closedByPeer()).isTrue();
                }
            }
        }
    }

    @Test
    void aRequestPipelinedBehindARefusedBodyIsNeverServed() throws Exception {
        try (TestNode node = TestNode.start(dir.resolve("data"), Map.of(NodeOption.MAX_VALUE_BYTES, "1000"))) {
            try (RawHttp client = RawHttp.connect(node.address())) {
                client.write("PUT /v0/entity?id=big HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                        + "Content-Length: " + BODY_BYTES + "\r\n\r\n");
                client.write(body());
                client.write("PUT /v0/entity?id=behind HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nvalue");

                assertThat(client.readResponse().status()).isEqualTo(413);
                assertThat(client.closedByPeer()).isTrue();
            }
            assertThat(node.get("/v0/entity?id=behind").statusCode()).as("the connection was closing").isEqualTo(404);
        }
    }

    private static byte[] body() {
        byte[] body = new byte[BODY_BYTES];
        Arrays.fill(body, (byte) 'x');
        return body;
    }
}
