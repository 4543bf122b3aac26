package io.kvorum.client;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The client's meters in a Micrometer registry (docs/java-client.md#metrics-and-traces). The only class of
 * the driver that refers to Micrometer: loaded only when the builder was given a registry.
 */
final class MicrometerTelemetry implements Telemetry {

    static final String REQUESTS = "kvorum.client.requests";
    static final String RETRIES = "kvorum.client.retries";
    static final String POOL_IN_USE = "kvorum.client.pool.in.use";
    static final String POOL_IDLE = "kvorum.client.pool.idle";
    static final String POOL_PENDING = "kvorum.client.pool.pending";

    private final MeterRegistry registry;

    private MicrometerTelemetry(MeterRegistry registry) {
        this.registry = registry;
    }

    /** @param registry a {@code MeterRegistry}, typed Object so that callers need not load Micrometer */
    static Telemetry of(Object registry) {
        return new MicrometerTelemetry((MeterRegistry) registry);
    }

    @Override
    public CallProbe call(String operation) {
        Timer.Sample sample = Timer.start(registry);
        return new CallProbe() {
            @Override
            public void retried(String reason) {
                Counter.builder(RETRIES).description("Attempts of a call after its first, by why the one before failed")
                        .tag("operation", operation).tag("reason", reason).register(registry).increment();
            }

            @Override
            public void ended(CallOutcome outcome) {
                sample.stop(Timer.builder(REQUESTS).description("Calls of the Kvorum client, retries included, by outcome"
                                + " and the node of their last attempt")
                        .tag("operation", operation).tag("outcome", outcome.outcome()).tag("endpoint", outcome.endpoint())
                        .register(registry));
            }
        };
    }

    @Override
    public Runnable pool(String endpoint, PoolState pool) {
        List<Meter> gauges = List.of(
                gauge(POOL_IN_USE, "Connections to a node with a request pending or held by a range", endpoint, pool,
                        PoolState::inUse),
                gauge(POOL_IDLE, "Open connections to a node with nothing pending", endpoint, pool, PoolState::idle),
                gauge(POOL_PENDING, "Requests sent or queued to a node and not yet answered", endpoint, pool,
                        PoolState::pending));
        return () -> gauges.forEach(registry::remove);
    }

    private Gauge gauge(String name, String description, String endpoint, PoolState pool, ToIntFunction<PoolState> value) {
        return Gauge.builder(name, pool, p -> value.applyAsInt(p)).description(description).tag("endpoint", endpoint)
                .strongReference(true).register(registry);
    }
}
