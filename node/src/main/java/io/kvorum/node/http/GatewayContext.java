package io.kvorum.node.http;

import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What every connection of the gateway shares: the core it calls into, and request accounting. */
final class GatewayContext {

    static final Logger log = LoggerFactory.getLogger(HttpGateway.class);

    private final Coordinator coordinator;
    private final int clusterSize;
    private final int replicationFactor;
    private final Clock clock;
    private final Supplier<String> status;
    private final Supplier<CompletableFuture<String>> repair;
    private final AtomicInteger inFlight = new AtomicInteger();

    GatewayContext(Coordinator coordinator, int clusterSize, int replicationFactor, Clock clock,
                   Supplier<String> status, Supplier<CompletableFuture<String>> repair) {
        this.coordinator = coordinator;
        this.clusterSize = clusterSize;
        this.replicationFactor = replicationFactor;
        this.clock = clock;
        this.status = status;
        this.repair = repair;
    }

    Coordinator coordinator() {
        return coordinator;
    }

    int clusterSize() {
        return clusterSize;
    }

    int replicationFactor() {
        return replicationFactor;
    }

    Clock clock() {
        return clock;
    }

    String statusJson() {
        return status.get();
    }

    CompletableFuture<String> repair() {
        return repair.get();
    }

    void requestStarted() {
        inFlight.incrementAndGet();
    }

    void requestFinished() {
        inFlight.decrementAndGet();
    }

    int inFlight() {
        return inFlight.get();
    }
}
