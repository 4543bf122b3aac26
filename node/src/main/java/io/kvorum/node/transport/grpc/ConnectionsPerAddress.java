package io.kvorum.node.transport.grpc;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps the connections to the gRPC port that one remote address holds open at once
 * (docs/architecture.md#limits-of-the-peer-port). A member holds one connection (its channel to
 * this node), two for a moment when it reconnects; the cap leaves room for many nodes sharing one
 * host or one NAT address, while a peer that opens connections in a loop, or leaks them, cannot take
 * the file descriptors that storage needs from the same process limit.
 *
 * <p>A connection past the cap is closed as soon as its HTTP/2 handshake arrives, before it can
 * start a call: this filter throws from {@link #transportReady}, which the transport answers with a
 * connection error ({@code GOAWAY}) and a close. What it throws is a plain {@link IOException},
 * which grpc-netty logs only at FINE, as a connection lost: the line of this class says why. The
 * peer's channel sees its connection fail and reconnects with backoff. A refusal is logged at most
 * once a minute, with the number of refusals since the last line.
 *
 * <p>Thread-safe: every event loop's transports share one.
 */
final class ConnectionsPerAddress extends ServerTransportFilter {

    private static final Logger log = LoggerFactory.getLogger(ConnectionsPerAddress.class);
    private static final long LOG_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** The address a transport counts toward, set on those admitted. */
    private static final Attributes.Key<InetAddress> COUNTED = Attributes.Key.create("kvorum.counted-address");

    private final int max;
    private final ConcurrentHashMap<InetAddress, Integer> open = new ConcurrentHashMap<>();
    private final AtomicLong refusedSinceLog = new AtomicLong();
    private final AtomicLong nextLog = new AtomicLong(System.nanoTime());

    /** @param max connections one remote address may hold open at once */
    ConnectionsPerAddress(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("a connection cap must be positive: " + max);
        }
        this.max = max;
    }

    /** Connections open now from {@code address}, as counted here; for tests. */
    int openFrom(InetAddress address) {
        return open.getOrDefault(address, 0);
    }

    @Override
    public Attributes transportReady(Attributes attributes) {
        SocketAddress remote = attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
            return attributes; // not a network connection (in-process): nothing to count
        }
        InetAddress address = inet.getAddress();
        if (open.merge(address, 1, Integer::sum) > max) {
            release(address);
            logRefusal(address);
            throw unchecked(new IOException(address.getHostAddress() + " holds " + max
                    + " connections to the gRPC port already"));
        }
        return attributes.toBuilder().set(COUNTED, address).build();
    }

    /** Attributes are null for a transport that never became ready, or that {@link #transportReady} refused. */
    @Override
    public void transportTerminated(Attributes attributes) {
        InetAddress address = attributes == null ? null : attributes.get(COUNTED);
        if (address != null) {
            release(address);
        }
    }

    /** Throws {@code e} although it is checked: {@link #transportReady} declares nothing. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException unchecked(Throwable e) throws E {
        throw (E) e;
    }

    private void release(InetAddress address) {
        open.computeIfPresent(address, (a, n) -> n == 1 ? null : n - 1);
    }

    private void logRefusal(InetAddress address) {
        long refused = refusedSinceLog.incrementAndGet();
        long now = System.nanoTime();
        long due = nextLog.get();
        if (now - due >= 0 && nextLog.compareAndSet(due, now + LOG_INTERVAL_NANOS)) {
            refusedSinceLog.addAndGet(-refused);
            log.warn("refused a connection to the gRPC port from {}: it holds {} already ({} refused since the last "
                    + "such line; see docs/operations.md#overload)", address.getHostAddress(), max, refused);
        }
    }
}
