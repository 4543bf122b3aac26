package io.kvorum.client;

import static io.kvorum.client.FakeNode.answer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/operations.md#security: the driver does not send a bearer token over plain {@code http://}
 * to a host beyond loopback unless its builder was told to ({@link KvorumClient.Builder#allowInsecure}),
 * and says so when it is built, never quoting the token.
 */
@Timeout(60)
class TokenInClearTest {

    private static final String TOKEN = "s3cret-t0ken";

    private final OpenedInTest opened = new OpenedInTest();

    @AfterEach
    void closeAll() throws Exception {
        opened.close();
    }

    private KvorumClient.Builder withToken(String endpoint) {
        return KvorumClient.builder().endpoints(URI.create(endpoint)).bearerToken(TOKEN);
    }

    @Test
    void aTokenForAPlainEndpointBeyondLoopbackIsRefusedWhenTheClientIsBuilt() {
        for (String endpoint : List.of("http://10.0.0.1:8080", "http://kvorum.example.org:8080", "http://[2001:db8::1]:8080",
                "http://0.0.0.0:8080")) {
            assertThatThrownBy(() -> withToken(endpoint).build()).as(endpoint)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("refusing to send the bearer token over plain HTTP to " + endpoint)
                    .hasMessageContaining("allowInsecure()").hasMessageNotContaining(TOKEN);
        }
        Supplier<String> source = () -> TOKEN;
        assertThatThrownBy(() -> KvorumClient.builder().endpoints(URI.create("http://127.0.0.1:8080"),
                URI.create("http://10.0.0.2:8080")).bearerToken(source).build())
                .as("any endpoint, any token source").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("http://10.0.0.2:8080");
    }

    @Test
    void loopbackHttpsNoTokenOrAllowInsecureBuild() {
        for (KvorumClient.Builder builder : List.of(
                withToken("http://127.0.0.1:8080"), withToken("http://127.9.9.9:8080"), withToken("http://localhost:8080"),
                withToken("http://[::1]:8080"), withToken("https://10.0.0.1:8443"),
                KvorumClient.builder().endpoints(URI.create("http://10.0.0.1:8080")),
                withToken("http://10.0.0.1:8080").allowInsecure())) {
            assertThat(opened.add(builder.build())).isNotNull();
        }
    }

    @Test
    void aMemberAtAPlainAddressBeyondLoopbackIsRefusedWhenRoutingToReplicas() throws Exception {
        AtomicReference<String> membership = new AtomicReference<>();
        FakeNode seed = opened.add(FakeNode.start((r, n) -> answer(200, membership.get())));
        membership.set("{\"name\":\"kvorum\",\"epoch\":1,\"members\":["
                + "{\"id\":\"n1\",\"host\":\"127.0.0.1\",\"http\":" + seed.port() + ",\"grpc\":9090,\"state\":\"normal\"},"
                + "{\"id\":\"n2\",\"host\":\"10.9.9.9\",\"http\":8080,\"grpc\":9090,\"state\":\"normal\"}],"
                + "\"replicationFactor\":2}");
        KvorumClient.Builder builder = KvorumClient.builder().endpoints(seed.uri()).bearerToken(TOKEN).routeToReplicas()
                .requestTimeout(Duration.ofSeconds(5));

        assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("http://10.9.9.9:8080").hasMessageNotContaining(TOKEN);
        assertThat(seed.seen).extracting(FakeNode.Seen::uri).as("the seed alone was asked, for the membership")
                .containsOnly("/v0/cluster");
        assertThat(opened.add(builder.allowInsecure().build()).endpoints()).hasSize(2);
    }
}
