package io.kvorum.perf.peers;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.RetryPolicy;
import io.kvorum.perf.cluster.LocalCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Kvorum as {@code perf peers} runs it: a {@link LocalCluster} (replicas = nodes, the node's quorum
 * for reads and writes) driven through the Java driver, which sends each request to one of its
 * key's replicas, as the Cassandra driver's token-aware routing does.
 */
public final class KvorumPeer implements PeerCluster {

    /** A request's bound; the same for every system. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final LocalCluster cluster;

    private KvorumPeer(LocalCluster cluster) {
        this.cluster = cluster;
    }

    /** Starts the nodes; returns once each answers {@code /v0/status}. */
    public static KvorumPeer start(LocalCluster.Spec spec) throws IOException, InterruptedException {
        return new KvorumPeer(LocalCluster.start(spec));
    }

    @Override
    public List<Long> pids() {
        return cluster.ids().stream().map(cluster::pid).toList();
    }

    @Override
    public List<String> commandLines() {
        return cluster.commandLines();
    }

    @Override
    public KeyValueTarget connect() {
        // No retries: a failed request is counted, as the other systems' clients are set to do.
        KvorumClient client = KvorumClient.builder().endpoints(cluster.httpUris())
                .requestTimeout(REQUEST_TIMEOUT)
                .retryPolicy(RetryPolicy.NONE)
                .routeToReplicas()
                .build();
        return new KeyValueTarget() {
            @Override
            public CompletableFuture<?> put(byte[] key, byte[] value) {
                return client.put(key, value, KvorumClient.Options.DEFAULT);
            }

            @Override
            public CompletableFuture<?> get(byte[] key) {
                return client.get(key, KvorumClient.Options.DEFAULT);
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    @Override
    public void close() {
        cluster.close();
    }
}
