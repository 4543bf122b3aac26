package io.kvorum.perf.ycsb;

import io.kvorum.client.KvorumClient;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link KvorumClient}s of one process, one per node URL, shared by every {@link KvorumDB}.
 *
 * <p>YCSB creates one DB instance per client thread and calls {@code init}/{@code cleanup} on
 * each, from that thread. The first {@link #acquire} creates the clients, each later one shares
 * them and gets the next URL round-robin (so threads spread over the nodes), and the last
 * {@link #release} closes them. Acquiring with other settings while clients are in use is a
 * configuration error: one process benchmarks one target.
 */
final class SharedClients {

    private static SharedClients current;
    private static int references;

    private final List<URI> urls;
    private final Duration timeout;
    private final ClientSecurity security;
    private final List<KvorumClient> clients;
    private final AtomicInteger nextUrl = new AtomicInteger();

    private SharedClients(List<URI> urls, Duration timeout, ClientSecurity security) {
        this.urls = List.copyOf(urls);
        this.timeout = timeout;
        this.security = security;
        this.clients = urls.stream().map(u -> security.client(u, timeout)).toList();
    }

    /** One client of the shared set, the next URL in turn; pair every call with {@link #release}. */
    static synchronized KvorumClient acquire(List<URI> urls, Duration timeout) {
        return acquire(urls, timeout, ClientSecurity.NONE);
    }

    /** {@link #acquire(List, Duration)} of clients that reach the nodes as {@code security} says. */
    static synchronized KvorumClient acquire(List<URI> urls, Duration timeout, ClientSecurity security) {
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("no node URL given");
        }
        if (current == null) {
            current = new SharedClients(urls, timeout, security);
        } else if (!current.urls.equals(urls) || !current.timeout.equals(timeout) || !current.security.equals(security)) {
            throw new IllegalStateException("clients for " + current.urls + " (timeout " + current.timeout
                    + ") are in use; cannot also use " + urls + " (timeout " + timeout + ") in this process");
        }
        references++;
        return current.clients.get(Math.floorMod(current.nextUrl.getAndIncrement(), current.clients.size()));
    }

    /** Gives back what one {@link #acquire} took; the last release closes the clients. */
    static synchronized void release() {
        if (references == 0) {
            throw new IllegalStateException("release without acquire");
        }
        if (--references == 0) {
            current.clients.forEach(KvorumClient::close);
            current = null;
        }
    }

    /** How many acquisitions are outstanding (tests). */
    static synchronized int references() {
        return references;
    }
}
