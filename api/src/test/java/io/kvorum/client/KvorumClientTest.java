package io.kvorum.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.kvorum.client.KvorumClient.Options;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the client sends and how it reads the answers (docs/http-api.md), against a stand-in node on
 * 127.0.0.1 (the JDK's HttpServer) that records each request and answers as the test says.
 */
@Timeout(30)
class KvorumClientTest {

    private record Seen(String method, String uri, byte[] body) {
    }

    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private volatile int status = 200;
    private volatile byte[] answer = new byte[0];
    private HttpServer server;
    private KvorumClient client;

    @BeforeEach
    void startStandIn() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            seen.add(new Seen(exchange.getRequestMethod(), exchange.getRequestURI().toString(),
                    exchange.getRequestBody().readAllBytes()));
            exchange.sendResponseHeaders(status, answer.length == 0 ? -1 : answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start();
        client = KvorumClient.create(base(), Duration.ofSeconds(5));
    }

    @AfterEach
    void stopStandIn() {
        client.close();
        server.stop(0);
    }

    private URI base() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void answer(int status, String body) {
        this.status = status;
        this.answer = body.getBytes(UTF_8);
    }

    private Seen only() {
        assertThat(seen).hasSize(1);
        return seen.get(0);
    }

    @Test
    void aGetWithDefaultOptionsNamesOnlyTheKey() {
        answer(200, "v");
        assertThat(client.get("user:1").join()).hasValueSatisfying(v -> assertThat(v).asString(UTF_8).isEqualTo("v"));
        assertThat(only().method()).isEqualTo("GET");
        assertThat(only().uri()).isEqualTo("/v0/entity?id=user%3A1");
    }

    @Test
    void aGetWithAQuorumSendsFromAndAck() {
        answer(200, "v");
        client.get("k", Options.quorum(2, 3)).join();
        assertThat(only().uri()).isEqualTo("/v0/entity?id=k&from=3&ack=2");
    }

    @Test
    void aGetAnswered404IsEmpty() {
        answer(404, "");
        assertThat(client.get("k").join()).isEqualTo(Optional.empty());
    }

    @Test
    void aPutSendsTheValueAndItsTtlInMilliseconds() {
        answer(201, "");
        client.put("k", "value".getBytes(UTF_8), Options.quorum(1, 2).withTtl(Duration.ofSeconds(5))).join();
        assertThat(only().method()).isEqualTo("PUT");
        assertThat(only().uri()).isEqualTo("/v0/entity?id=k&from=2&ack=1&ttl=5000");
        assertThat(only().body()).asString(UTF_8).isEqualTo("value");
    }

    @Test
    void aDeleteIsAccepted() {
        answer(202, "");
        client.delete("k", Options.quorum(3, 3)).join();
        assertThat(only().method()).isEqualTo("DELETE");
        assertThat(only().uri()).isEqualTo("/v0/entity?id=k&from=3&ack=3");
    }

    @Test
    void aTtlOnADeleteOrAGetIsRefusedBeforeAnythingIsSent() {
        Options withTtl = Options.DEFAULT.withTtl(Duration.ofSeconds(1));
        assertThatThrownBy(() -> client.delete("k", withTtl)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ttl applies to put only");
        assertThatThrownBy(() -> client.get("k", withTtl)).isInstanceOf(IllegalArgumentException.class);
        assertThat(seen).isEmpty();
    }

    @Test
    void anUnexpectedStatusFailsWithAKvorumExceptionCarryingItAndTheBody() {
        answer(504, "Not Enough Replicas");
        assertThatThrownBy(() -> client.put("k", new byte[1]).join()).isInstanceOf(CompletionException.class)
                .cause().isInstanceOfSatisfying(KvorumException.class, e -> {
                    assertThat(e.status()).isEqualTo(504);
                    assertThat(e.isNotEnoughReplicas()).isTrue();
                    assertThat(e.isOverloaded()).isFalse();
                    assertThat(e).hasMessage("HTTP 504: Not Enough Replicas");
                });
    }

    @Test
    void a201ToADeleteIsNotTakenForSuccess() {
        answer(201, "");
        assertThatThrownBy(() -> client.delete("k").join()).cause().isInstanceOf(KvorumException.class);
    }

    @Test
    void anOverloadedNodeIsReportedAsSuch() {
        answer(503, "Overloaded");
        assertThatThrownBy(() -> client.get("k").join()).cause()
                .isInstanceOfSatisfying(KvorumException.class, e -> assertThat(e.isOverloaded()).isTrue());
    }

    @Test
    void aTrailingSlashOfTheBaseUriIsDropped() {
        answer(200, "v");
        try (KvorumClient slashed = KvorumClient.create(URI.create(base() + "/"), Duration.ofSeconds(5))) {
            assertThat(slashed.baseUri()).isEqualTo(base());
            slashed.get("k").join();
        }
        assertThat(only().uri()).isEqualTo("/v0/entity?id=k");
    }

    @Test
    void readyMeansStatusAnswers200() {
        answer(200, "{}");
        assertThat(client.isReady().join()).isTrue();
        assertThat(only().uri()).isEqualTo("/v0/status");
        answer(503, "starting");
        assertThat(client.isReady().join()).isFalse();
    }

    @Test
    void aNodeThatDoesNotListenIsNotReadyAndItsRequestsFailWithAnIoException() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        try (KvorumClient nobody = KvorumClient.create(URI.create("http://127.0.0.1:" + port), Duration.ofSeconds(5))) {
            assertThat(nobody.isReady().join()).isFalse();
            assertThatThrownBy(() -> nobody.get("k").join()).cause().isInstanceOf(java.net.ConnectException.class);
        }
    }

    @Test
    void keysArePercentEncodedByteByByteExceptUnreservedCharacters() {
        assertThat(KvorumClient.encode("azAZ09-_.~".getBytes(UTF_8))).isEqualTo("azAZ09-_.~");
        assertThat(KvorumClient.encode("a b/c?d&e=f%".getBytes(UTF_8))).isEqualTo("a%20b%2Fc%3Fd%26e%3Df%25");
        assertThat(KvorumClient.encode("é".getBytes(UTF_8))).isEqualTo("%C3%A9");
        assertThat(KvorumClient.encode(new byte[] {0, 10, (byte) 0xff})).isEqualTo("%00%0A%FF");
        assertThat(KvorumClient.encode(new byte[0])).isEmpty();
    }

    @Test
    void binaryKeysReachTheNodeIntact() {
        answer(200, "v");
        client.get(new byte[] {0, (byte) 0xff}, Options.DEFAULT).join();
        assertThat(only().uri()).as("the stand-in decodes nothing: it sees the raw query")
                .isEqualTo("/v0/entity?id=%00%FF");
    }
}
