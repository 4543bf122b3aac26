package io.kvorum.client;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;

/**
 * A span per call in OpenTelemetry (docs/java-client.md#metrics-and-traces), child of the span current on
 * the thread that made the call. The only class of the driver that refers to OpenTelemetry: loaded
 * only when the builder was given an {@code OpenTelemetry}.
 */
final class OpenTelemetryTracing implements Telemetry {

    static final String INSTRUMENTATION = "io.kvorum.client";
    static final AttributeKey<String> DB_SYSTEM = AttributeKey.stringKey("db.system");
    static final AttributeKey<String> DB_OPERATION = AttributeKey.stringKey("db.operation.name");
    static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    static final AttributeKey<Long> RETRIES = AttributeKey.longKey("kvorum.retries");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("kvorum.outcome");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

    private final Tracer tracer;

    private OpenTelemetryTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer(INSTRUMENTATION);
    }

    /** @param openTelemetry an {@code OpenTelemetry}, typed Object so that callers need not load OpenTelemetry */
    static Telemetry of(Object openTelemetry) {
        return new OpenTelemetryTracing((OpenTelemetry) openTelemetry);
    }

    @Override
    public CallProbe call(String operation) {
        Span span = tracer.spanBuilder("kvorum " + operation).setSpanKind(SpanKind.CLIENT)
                .setAttribute(DB_SYSTEM, "kvorum").setAttribute(DB_OPERATION, operation).startSpan();
        return new CallProbe() {
            @Override
            public void retried(String reason) {
                span.addEvent("retry: " + reason);
            }

            @Override
            public void ended(CallOutcome outcome) {
                if (outcome.host() != null) {
                    span.setAttribute(SERVER_ADDRESS, outcome.host());
                    span.setAttribute(SERVER_PORT, (long) outcome.port());
                }
                if (outcome.status() > 0) {
                    span.setAttribute(STATUS, (long) outcome.status());
                }
                span.setAttribute(RETRIES, (long) outcome.retries());
                span.setAttribute(OUTCOME, outcome.outcome());
                if (outcome.error() != null) {
                    span.setAttribute(ERROR_TYPE, outcome.error().getClass().getName());
                    span.setStatus(StatusCode.ERROR, outcome.outcome());
                }
                span.end();
            }
        };
    }

    @Override
    public Runnable pool(String endpoint, PoolState pool) {
        return () -> { };
    }
}
