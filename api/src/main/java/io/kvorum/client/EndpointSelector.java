package io.kvorum.client;

import io.kvorum.client.placement.ReplicaRouter;
import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Chooses the node that coordinates a request. Any node coordinates any request (docs/http-api.md), so
 * the default is {@link #roundRobin()}; a token-aware selector can instead pick one of the key's
 * replicas and save the coordinator a hop.
 *
 * <p>Called on any thread, including the client's event loops, once per attempt: it must be
 * thread-safe and must not block.
 */
@FunctionalInterface
public interface EndpointSelector {

    /**
     * One of {@code candidates}, which is never empty and keeps the order the endpoints were
     * given in. It holds the healthy endpoints this call has not tried yet; when there are none,
     * the healthy ones; when none is healthy, all of them (a request is still tried rather than
     * refused while every endpoint is being re-probed).
     *
     * @param key the request's key as UTF-8 bytes, or {@code null} for requests without one
     *            (ranges, status)
     */
    URI select(byte[] key, List<URI> candidates);

    /**
     * The first of the key's replicas, in the key's preference order, that is a candidate: the node
     * that coordinates is then a replica and the request saves a hop (what the Cassandra driver's
     * token-aware policy does), and a read's full record comes from that node's own store. Requests
     * without a key, or whose replicas are all down or tried, go round robin.
     */
    static EndpointSelector replicasFirst(ReplicaRouter router) {
        EndpointSelector others = roundRobin();
        return (key, candidates) -> {
            if (key != null) {
                for (URI replica : router.replicasFor(key)) {
                    if (candidates.contains(replica)) {
                        return replica;
                    }
                }
            }
            return others.select(key, candidates);
        };
    }

    /** Each candidate in turn, whatever the key. */
    static EndpointSelector roundRobin() {
        AtomicInteger next = new AtomicInteger();
        return (key, candidates) -> candidates.get(Math.floorMod(next.getAndIncrement(), candidates.size()));
    }
}
