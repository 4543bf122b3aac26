package io.kvorum.client;

import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Chooses the node that coordinates a request. Any node coordinates any request (SPEC §2), so
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

    /** Each candidate in turn, whatever the key. */
    static EndpointSelector roundRobin() {
        AtomicInteger next = new AtomicInteger();
        return (key, candidates) -> candidates.get(Math.floorMod(next.getAndIncrement(), candidates.size()));
    }
}
