package io.kvorum.client;

import java.io.IOException;
import java.net.ConnectException;
import java.util.List;

/**
 * What the client reports of its calls and its pools (docs/java-client.md#metrics-and-traces): nothing
 * by default; meters when the builder was given a Micrometer {@code MeterRegistry}
 * ({@link MicrometerTelemetry}), a span per call when it was given an {@code OpenTelemetry}
 * ({@link OpenTelemetryTracing}). Only those two classes refer to Micrometer or OpenTelemetry, and
 * each is loaded only when the builder was given its library's object, so that the client runs
 * with neither on the class path.
 */
interface Telemetry {

    Telemetry NONE = new Telemetry() {
        @Override
        public CallProbe call(String operation) {
            return CallProbe.NONE;
        }

        @Override
        public Runnable pool(String endpoint, PoolState pool) {
            return () -> { };
        }
    };

    /** A call of {@code operation} (get, put, delete, range) begins. */
    CallProbe call(String operation);

    /** Reports the pool of connections to {@code endpoint} (host:port); the returned action stops that. */
    Runnable pool(String endpoint, PoolState pool);

    /** What one call reports: its retries as they are scheduled, then how it ended. */
    interface CallProbe {
        CallProbe NONE = new CallProbe() {
            @Override
            public void retried(String reason) {
            }

            @Override
            public void ended(CallOutcome outcome) {
            }
        };

        /** A retry was scheduled after a failed attempt; {@code reason} is one of {@link CallOutcome}'s retry reasons. */
        void retried(String reason);

        void ended(CallOutcome outcome);
    }

    /** A pool's state, read when a meter is read. */
    interface PoolState {
        /** Connections with a request pending or held by a range. */
        int inUse();

        /** Open connections with nothing pending. */
        int idle();

        /** Requests sent or queued on the pool's connections and not yet answered. */
        int pending();
    }

    /** Every one of {@code all}'s reports: a client given both a meter registry and OpenTelemetry. */
    static Telemetry of(List<Telemetry> all) {
        if (all.isEmpty()) {
            return NONE;
        }
        if (all.size() == 1) {
            return all.get(0);
        }
        return new Telemetry() {
            @Override
            public CallProbe call(String operation) {
                List<CallProbe> probes = all.stream().map(t -> t.call(operation)).toList();
                return new CallProbe() {
                    @Override
                    public void retried(String reason) {
                        probes.forEach(p -> p.retried(reason));
                    }

                    @Override
                    public void ended(CallOutcome outcome) {
                        probes.forEach(p -> p.ended(outcome));
                    }
                };
            }

            @Override
            public Runnable pool(String endpoint, PoolState pool) {
                List<Runnable> stops = all.stream().map(t -> t.pool(endpoint, pool)).toList();
                return () -> stops.forEach(Runnable::run);
            }
        };
    }

    /**
     * How a call ended, as the meters and spans report it.
     *
     * @param outcome  ok, not_found, client_error, server_error, timeout or unavailable ({@link #of})
     * @param host     the node of the call's last attempt, or null when no attempt began
     * @param port     its port
     * @param status   the HTTP status of the last answer, 0 when none came
     * @param retries  attempts after the first
     * @param error    what the call failed with, or null
     */
    record CallOutcome(String outcome, String host, int port, int status, int retries, Throwable error) {

        /** host:port, or "none" when no attempt began. */
        String endpoint() {
            return host == null ? "none" : host + ":" + port;
        }

        /**
         * The outcome of a call that answered {@code status} (0: it failed without an answer) or
         * failed with {@code error} (null: it succeeded).
         */
        static String of(int status, Throwable error) {
            if (error == null) {
                return status == 404 ? "not_found" : "ok";
            }
            if (error instanceof KvorumTimeoutException) {
                return "timeout";
            }
            if (error instanceof ConnectException || error instanceof KvorumConnectionException
                    || error instanceof KvorumException k && (k.status() == 503 || k.status() == 504)) {
                return "unavailable";
            }
            if (error instanceof KvorumException k && k.status() >= 500 || error instanceof IOException
                    && !(error instanceof ResponseTooLargeException)) {
                return "server_error"; // another 5xx, or an answer that was not HTTP
            }
            return "client_error"; // a 4xx, an answer over maxResponseBytes, a token source that failed
        }

        /** Why an attempt that failed with {@code error} is retried: unavailable (a 503), connect_failed or connection_lost. */
        static String retryReason(Throwable error) {
            if (error instanceof ConnectException) {
                return "connect_failed";
            }
            return error instanceof KvorumConnectionException ? "connection_lost" : "unavailable";
        }
    }
}
