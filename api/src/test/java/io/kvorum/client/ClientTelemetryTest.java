package io.kvorum.client;

import static io.kvorum.client.FakeNode.answer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.kvorum.client.KvorumClient.Options;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client's meters and spans (docs/java-client.md#metrics-and-traces), against {@link FakeNode}s. */
@Timeout(60)
class ClientTelemetryTest {

    private final OpenedInTest opened = new OpenedInTest();
    private final MeterRegistry registry = new SimpleMeterRegistry();

    @AfterEach
    void closeAll() throws Exception {
        opened.close();
    }

    /** Answers by key: ok 200, missing 404, busy 503, slow never; a PUT 201, a DELETE 202. */
    private static FakeNode.Script byKey() {
        return (r, n) -> {
            String id = r.uri().substring(r.uri().indexOf("id=") + 3).split("&")[0];
            return switch (id) {
                case "missing" -> answer(404, "");
                case "busy" -> answer(503, "Overloaded", "Retry-After", "1");
                case "slow" -> FakeNode.SILENCE;
                default -> answer(switch (r.method().name()) {
                    case "PUT" -> 201;
                    case "DELETE" -> 202;
                    default -> 200;
                }, "v");
            };
        };
    }

    private FakeNode node(FakeNode.Script script) throws InterruptedException {
        return opened.add(FakeNode.start(script));
    }

    private KvorumClient client(KvorumClient.Builder builder) {
        return opened.add(builder.build());
    }

    private long calls(String operation, String outcome, FakeNode node) {
        return calls(operation, outcome, endpoint(node.uri()));
    }

    private long calls(String operation, String outcome, String endpoint) {
        Timer t = registry.find("kvorum.client.requests").tags("operation", operation, "outcome", outcome, "endpoint", endpoint)
                .timer();
        return t == null ? 0 : t.count();
    }

    private double retries(String operation, String reason) {
        var c = registry.find("kvorum.client.retries").tags("operation", operation, "reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    private static String endpoint(URI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }

    private static Throwable failure(CompletableFuture<?> f) {
        return Call.unwrap(catchThrowable(f::join));
    }

    @Test
    void eachCallIsTimedByOperationOutcomeAndEndpoint() throws Exception {
        FakeNode node = node(byKey());
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).retryPolicy(RetryPolicy.NONE)
                .meterRegistry(registry));

        assertThat(kv.get("k").join()).isPresent();
        assertThat(kv.get("missing").join()).isEmpty();
        assertThat(failure(kv.get("busy"))).isInstanceOf(OverloadedException.class);
        assertThat(failure(kv.get("slow", Options.DEFAULT.withTimeout(Duration.ofMillis(200)))))
                .isInstanceOf(KvorumTimeoutException.class);
        kv.put("k", "v".getBytes(StandardCharsets.UTF_8)).join();
        kv.delete("k").join();

        assertThat(calls("get", "ok", node)).isEqualTo(1);
        assertThat(calls("get", "not_found", node)).isEqualTo(1);
        assertThat(calls("get", "unavailable", node)).isEqualTo(1);
        assertThat(calls("get", "timeout", node)).isEqualTo(1);
        assertThat(calls("put", "ok", node)).isEqualTo(1);
        assertThat(calls("delete", "ok", node)).isEqualTo(1);
        assertThat(registry.find("kvorum.client.requests").timers()).as("no other series").hasSize(6);
        assertThat(registry.find("kvorum.client.retries").counters()).as("no retries").isEmpty();
    }

    @Test
    void aRefusedRequestIsAClientError() throws Exception {
        FakeNode node = node((r, n) -> answer(403, "forbidden"));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).meterRegistry(registry));
        assertThat(failure(kv.get("k"))).isInstanceOf(ForbiddenException.class);
        assertThat(calls("get", "client_error", node)).isEqualTo(1);
    }

    @Test
    void retriesAreCountedByReasonAndTheCallOnceByItsLastAttempt() throws Exception {
        AtomicInteger puts = new AtomicInteger();
        FakeNode node = node((r, n) -> puts.getAndIncrement() < 2 ? answer(503, "Overloaded", "Retry-After", "1")
                : answer(201, ""));
        URI down = URI.create("http://127.0.0.1:" + KvorumDriverTest.closedPort());
        KvorumClient kv = client(KvorumClient.builder().endpoints(down, node.uri())
                .endpointSelector((key, candidates) -> candidates.get(0)) // the closed port first
                .retryPolicy(new RetryPolicy(4, Duration.ofMillis(1), Duration.ofMillis(5))).meterRegistry(registry));

        kv.put("k", new byte[1]).join();

        assertThat(retries("put", "connect_failed")).isEqualTo(1);
        assertThat(retries("put", "unavailable")).isEqualTo(2);
        assertThat(calls("put", "ok", node)).as("timed once, at the node that answered").isEqualTo(1);
        assertThat(calls("put", "ok", endpoint(down))).isZero();
    }

    @Test
    void thePoolOfEachEndpointIsGaugedUntilTheClientCloses() throws Exception {
        FakeNode node = node(byKey());
        KvorumClient kv = KvorumClient.builder().endpoints(node.uri()).connectionsPerEndpoint(2)
                .retryPolicy(RetryPolicy.NONE).meterRegistry(registry).build();
        String endpoint = endpoint(node.uri());
        try {
            kv.get("k").join();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(gauge("kvorum.client.pool.idle", endpoint)).isEqualTo(1);
                assertThat(gauge("kvorum.client.pool.in.use", endpoint)).isZero();
                assertThat(gauge("kvorum.client.pool.pending", endpoint)).isZero();
            });
            CompletableFuture<?> slow1 = kv.get("slow");
            CompletableFuture<?> slow2 = kv.get("slow");
            CompletableFuture<?> slow3 = kv.get("slow");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(gauge("kvorum.client.pool.in.use", endpoint)).isEqualTo(2);
                assertThat(gauge("kvorum.client.pool.idle", endpoint)).isZero();
                assertThat(gauge("kvorum.client.pool.pending", endpoint)).isEqualTo(3);
            });
            assertThat(List.of(slow1, slow2, slow3)).noneMatch(CompletableFuture::isDone);
        } finally {
            kv.close();
        }
        assertThat(registry.find("kvorum.client.pool.in.use").gauges()).as("removed at close").isEmpty();
        assertThat(registry.find("kvorum.client.pool.idle").gauges()).isEmpty();
        assertThat(registry.find("kvorum.client.pool.pending").gauges()).isEmpty();
    }

    private double gauge(String name, String endpoint) {
        return registry.get(name).tag("endpoint", endpoint).gauge().value();
    }

    @Test
    void withoutARegistryNothingIsRecorded() throws Exception {
        FakeNode node = node(byKey());
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()));
        assertThat(kv.get("k").join()).isPresent();
        assertThat(kv.get("missing").join()).isEmpty();
        assertThat(registry.getMeters()).isEmpty();
    }

    @Test
    void eachCallIsASpanChildOfTheCallersSpan() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        SdkTracerProvider tracing = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
        opened.add(tracing::close);
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(tracing).build();
        AtomicInteger gets = new AtomicInteger();
        FakeNode node = node((r, n) -> gets.getAndIncrement() == 0 ? answer(503, "Overloaded", "Retry-After", "1")
                : answer(404, ""));
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).openTelemetry(otel)
                .retryPolicy(new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(5))));

        Span parent = otel.getTracer("test").spanBuilder("parent").startSpan();
        try (Scope ignored = parent.makeCurrent()) {
            assertThat(kv.get("k").join()).isEmpty();
        } finally {
            parent.end();
        }

        SpanData get = spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals("kvorum get")).findFirst()
                .orElseThrow();
        assertThat(get.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(get.getParentSpanId()).isEqualTo(parent.getSpanContext().getSpanId());
        assertThat(get.getAttributes().get(AttributeKey.stringKey("db.system"))).isEqualTo("kvorum");
        assertThat(get.getAttributes().get(AttributeKey.stringKey("server.address"))).isEqualTo("127.0.0.1");
        assertThat(get.getAttributes().get(AttributeKey.longKey("server.port"))).isEqualTo(node.port());
        assertThat(get.getAttributes().get(AttributeKey.longKey("http.response.status_code"))).isEqualTo(404);
        assertThat(get.getAttributes().get(AttributeKey.longKey("kvorum.retries"))).isEqualTo(1);
        assertThat(get.getAttributes().get(AttributeKey.stringKey("kvorum.outcome"))).isEqualTo("not_found");
        assertThat(get.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    }

    @Test
    void aFailedCallsSpanIsAnError() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        SdkTracerProvider tracing = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build();
        opened.add(tracing::close);
        FakeNode node = node(byKey());
        KvorumClient kv = client(KvorumClient.builder().endpoints(node.uri()).retryPolicy(RetryPolicy.NONE)
                .openTelemetry(OpenTelemetrySdk.builder().setTracerProvider(tracing).build()).meterRegistry(registry));

        assertThat(failure(kv.put("busy", new byte[1]))).isInstanceOf(OverloadedException.class);

        assertThat(spans.getFinishedSpanItems()).singleElement().satisfies(s -> {
            assertThat(s.getName()).isEqualTo("kvorum put");
            assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
            assertThat(s.getAttributes().get(AttributeKey.longKey("http.response.status_code"))).isEqualTo(503);
            assertThat(s.getAttributes().get(AttributeKey.stringKey("error.type")))
                    .isEqualTo(OverloadedException.class.getName());
        });
        assertThat(calls("put", "unavailable", node)).as("meters and spans together").isEqualTo(1);
    }
}
