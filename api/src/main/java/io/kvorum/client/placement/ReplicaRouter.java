package io.kvorum.client.placement;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which nodes to send a key's request to: the HTTP endpoints of the key's replicas, in the key's
 * preference order, as the nodes place it (docs/operations.md#how-replicas-converge and #growing-and-shrinking-a-cluster: {@link Rendezvous} over the
 * {@link ClusterView.Member#isNormal() normal} members). Sending a request to its first replica,
 * as Cassandra's token-aware policy does, saves the coordinator a network hop for its own copy;
 * any node still accepts any request, so a stale view costs latency, never correctness.
 *
 * <p>Immutable and thread-safe; build a new one when the view changes.
 */
public final class ReplicaRouter {

    private final ClusterView view;
    private final Rendezvous placement;
    /** The normal members' endpoints, in the order of {@link Rendezvous#memberIds()}. */
    private final List<URI> endpoints;

    private ReplicaRouter(ClusterView view, String scheme) {
        List<ClusterView.Member> normal = view.members().stream().filter(ClusterView.Member::isNormal).toList();
        if (normal.isEmpty()) {
            throw new IllegalArgumentException("cluster view of epoch " + view.epoch() + " has no normal member");
        }
        this.view = view;
        this.placement = Rendezvous.over(normal.stream().map(ClusterView.Member::id).toList());
        Map<String, URI> byId = normal.stream().collect(Collectors.toMap(ClusterView.Member::id, m -> m.httpUri(scheme)));
        this.endpoints = placement.memberIds().stream().map(byId::get).toList();
    }

    /**
     * Routes over plain HTTP.
     *
     * @throws IllegalArgumentException when the view has no normal member
     */
    public static ReplicaRouter of(ClusterView view) {
        return new ReplicaRouter(view, "http");
    }

    /**
     * Routes with {@code scheme}, {@code http} or {@code https}.
     *
     * @throws IllegalArgumentException for another scheme, or when the view has no normal member
     */
    public static ReplicaRouter of(ClusterView view, String scheme) {
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("scheme must be http or https, got '" + scheme + "'");
        }
        return new ReplicaRouter(view, scheme);
    }

    public ClusterView view() {
        return view;
    }

    /** The endpoints of the key's first {@link ClusterView#replicationFactor()} replicas, as a request without {@code from}. */
    public List<URI> replicasFor(byte[] key) {
        return replicasFor(key, view.replicationFactor());
    }

    /**
     * The endpoints of the key's first {@code from} replicas, first the one to try first. Never more
     * than the normal members: for a larger {@code from} every one of them, and the node itself answers
     * such a request {@code 400}.
     *
     * @param key the key's bytes, as the node reads them: the UTF-8 bytes of the decoded {@code id}
     * @throws IllegalArgumentException when {@code from} is below 1
     */
    public List<URI> replicasFor(byte[] key, int from) {
        if (from < 1) {
            throw new IllegalArgumentException("from must be at least 1, got " + from);
        }
        return placement.replicas(key, Math.min(from, endpoints.size()), endpoints);
    }

    /** {@link #replicasFor(byte[], int)} of the key's UTF-8 bytes. */
    public List<URI> replicasFor(String key, int from) {
        return replicasFor(key.getBytes(StandardCharsets.UTF_8), from);
    }
}
