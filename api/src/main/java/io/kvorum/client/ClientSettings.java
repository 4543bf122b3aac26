package io.kvorum.client;

import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * What a {@link KvorumClient.Builder} collected, validated; {@code callbackExecutor} and {@code bearerToken} (the
 * source of the token each request carries) may be null, and so may {@code tls} when no endpoint is {@code https}.
 * {@code allowInsecure}: the token may go to a plain {@code http://} endpoint beyond loopback. {@code telemetry}: where
 * calls and pools are reported ({@link Telemetry#NONE} when nowhere).
 */
record ClientSettings(List<URI> endpoints, Duration connectTimeout, Duration requestTimeout, int connectionsPerEndpoint,
                      int maxPendingPerConnection, int ioThreads, Executor callbackExecutor, RetryPolicy retryPolicy,
                      EndpointSelector selector, Supplier<String> bearerToken, Duration probeInterval, int maxResponseBytes,
                      Duration closeTimeout, Duration membershipRefreshInterval, SslContext tls, boolean allowInsecure,
                      Telemetry telemetry) {

    @Override
    public String toString() { // never the token
        return "ClientSettings{endpoints=" + endpoints + ", requestTimeout=" + requestTimeout
                + ", connectionsPerEndpoint=" + connectionsPerEndpoint + ", retryPolicy=" + retryPolicy
                + (bearerToken != null ? ", bearerToken=<set>" : "") + "}";
    }
}
