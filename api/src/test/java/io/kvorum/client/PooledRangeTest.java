package io.kvorum.client;

import static io.kvorum.client.FakeNode.answer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A range uses its node's pool of connections as other calls do (docs/java-client.md): it holds one
 * until its answer ended, then leaves it to other requests.
 */
@Timeout(60)
class PooledRangeTest {

    private final OpenedInTest opened = new OpenedInTest();
    private final ExecutorService background = Executors.newSingleThreadExecutor();

    @AfterEach
    void closeAll() throws Exception {
        opened.close();
        background.shutdownNow();
    }

    /** A range answer of one entry, {@code a -> 1}: one chunk, then the terminating one. */
    private static FullHttpResponse oneEntry() {
        FullHttpResponse r = answer(200, "a\n1");
        r.headers().remove(HttpHeaderNames.CONTENT_LENGTH).set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        return r;
    }

    @Test
    void aRangeReadToItsEndLeavesItsConnectionToTheNextRequests() throws Exception {
        FakeNode node = opened.add(FakeNode.start((r, n) -> r.uri().startsWith("/v0/entities") ? oneEntry() : answer(200, "v")));
        KvorumClient kv = opened.add(KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(1).build());

        for (int i = 0; i < 3; i++) {
            try (RangeReader range = kv.range("a", null)) {
                assertThat(range.next().keyString()).isEqualTo("a");
                assertThat(range.next()).isNull();
            }
            assertThat(kv.get("k").join()).hasValue("v".getBytes(StandardCharsets.UTF_8));
        }

        assertThat(node.seen).hasSize(6);
        assertThat(node.connections).as("one connection for ranges and requests alike").hasValue(1);
    }

    @Test
    void aRangeHoldsItsConnectionUntilItsAnswerEndsAndOtherRequestsGoElsewhereInThePool() throws Exception {
        FakeNode node = opened.add(FakeNode.start((r, n) -> r.uri().startsWith("/v0/entities") ? FakeNode.SILENCE
                : answer(200, "v")));
        MeterRegistry registry = new SimpleMeterRegistry();
        KvorumClient kv = opened.add(KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(2)
                .retryPolicy(RetryPolicy.NONE).meterRegistry(registry).build());
        String endpoint = "127.0.0.1:" + node.port();

        Future<RangeReader> range = background.submit(() -> kv.range("a", null, Duration.ofSeconds(30)));
        await().atMost(Duration.ofSeconds(10)).until(() -> node.seen.size() == 1);
        for (int i = 0; i < 3; i++) {
            assertThat(kv.get("k" + i).join()).as("on the pool's other connection").isPresent();
        }
        assertThat(node.connections).hasValue(2);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> // the gets' connection is released as they complete
                assertThat(registry.get("kvorum.client.pool.in.use").tag("endpoint", endpoint).gauge().value())
                        .as("the range's connection").isEqualTo(1));
        assertThat(range).isNotDone();
    }

    @Test
    void withEveryConnectionHeldByARangeACallFailsAtOnce() throws Exception {
        FakeNode node = opened.add(FakeNode.start((r, n) -> r.uri().startsWith("/v0/entities") ? FakeNode.SILENCE
                : answer(200, "v")));
        KvorumClient kv = opened.add(KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(1)
                .requestTimeout(Duration.ofSeconds(30)).build());

        background.submit(() -> kv.range("a", null));
        await().atMost(Duration.ofSeconds(10)).until(() -> node.seen.size() == 1);
        CompletableFuture<?> get = kv.get("k");

        assertThat(Call.unwrap(catchThrowable(get::join))).isInstanceOfSatisfying(OverloadedException.class, e -> {
            assertThat(e.isLocal()).isTrue();
            assertThat(e).hasMessageContaining("held by a range");
        });
        assertThat(node.connections).hasValue(1);
    }
}
