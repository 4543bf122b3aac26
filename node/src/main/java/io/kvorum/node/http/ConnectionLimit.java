package io.kvorum.node.http;

import com.sun.management.UnixOperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many client connections the gateway holds open at once ({@code --max-connections}).
 *
 * <p>Why: every connection holds a file descriptor, and the store needs descriptors of the same
 * process limit for its tables and logs. Without a bound, enough idle connections (a flood, or
 * clients that leak them) take them all: the node stops accepting connections, health checks
 * included, and LevelDB fails writes on connections already open because it cannot open its next
 * log. Past the bound a new connection is {@linkplain Admission#REFUSED refused}: its first
 * request is answered {@code 503} with {@code Retry-After} ({@link TooManyConnectionsException})
 * and it is closed. A refused connection holds a descriptor until it closes, 10 s at most
 * ({@link GatewayChannelInitializer#REFUSED_SECONDS}); at most {@link #refusalsAtOnce} are held at a time, and a connection past those is
 * {@linkplain Admission#DROPPED closed at once}, unanswered.
 *
 * <p>Thread-safe, lock-free: connections on every event loop share one.
 */
final class ConnectionLimit {

    /**
     * File descriptors kept for everything but client connections: the two LevelDB databases
     * (records, hints) each keep up to 1,000 tables open, plus their logs, the peers' gRPC
     * connections, the JVM's own files, and the refused connections being answered.
     */
    static final int RESERVED_DESCRIPTORS = 2560;
    /** The limit is never lowered below this, however low the process's open-file limit. */
    static final int FLOOR = 64;
    static final int REFUSALS_AT_ONCE = 256;

    /** What the gateway does with a new connection. */
    enum Admission {
        /** Served: it counts toward the limit until it closes. */
        ADMITTED,
        /** Answered 503 at its first request, then closed; it counts among the refusals until it closes. */
        REFUSED,
        /** Closed at once, unanswered: too many refusals are already being answered. Counts nowhere. */
        DROPPED
    }

    private final int max;
    private final int refusalsAtOnce;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger refusing = new AtomicInteger();
    private final LongAdder refused = new LongAdder();

    /**
     * @param max            connections served at once, at most
     * @param refusalsAtOnce refused connections held at once to be answered, at most
     */
    ConnectionLimit(int max, int refusalsAtOnce) {
        if (max < 1 || refusalsAtOnce < 0) {
            throw new IllegalArgumentException("a connection limit must be positive: " + max + ", " + refusalsAtOnce);
        }
        this.max = max;
        this.refusalsAtOnce = refusalsAtOnce;
    }

    /**
     * The limit that {@code configured} leaves a process whose open-file limit is {@code openFiles}:
     * {@code configured}, or less when the descriptors left after {@link #RESERVED_DESCRIPTORS}
     * are fewer, but never less than {@link #FLOOR}.
     */
    static int effective(int configured, long openFiles) {
        long available = Math.max(FLOOR, openFiles - RESERVED_DESCRIPTORS);
        return (int) Math.min(configured, available);
    }

    /**
     * This process's open-file limit, or {@link Long#MAX_VALUE} where the JVM cannot tell: not a
     * Unix, or a runtime without the {@code jdk.management} module (checked first: the class below
     * would fail to load).
     */
    static long openFileLimit() {
        if (ModuleLayer.boot().findModule("jdk.management").isEmpty()) {
            return Long.MAX_VALUE;
        }
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : Long.MAX_VALUE;
    }

    /** Decides about a new connection; unless it is dropped, {@link #closed} must follow when it closes. */
    Admission admit() {
        if (increment(open, max)) {
            return Admission.ADMITTED;
        }
        refused.increment();
        return increment(refusing, refusalsAtOnce) ? Admission.REFUSED : Admission.DROPPED;
    }

    /** A connection that {@link #admit} admitted or refused has closed. */
    void closed(Admission admission) {
        switch (admission) {
            case ADMITTED -> open.decrementAndGet();
            case REFUSED -> refusing.decrementAndGet();
            case DROPPED -> { }
        }
    }

    /** Connections served now. */
    int open() {
        return open.get();
    }

    /** Connections refused or dropped since the start. */
    long refused() {
        return refused.sum();
    }

    int max() {
        return max;
    }

    /** Adds one to {@code count} if it is below {@code bound}. */
    private static boolean increment(AtomicInteger count, int bound) {
        int now;
        do {
            now = count.get();
            if (now >= bound) {
                return false;
            }
        } while (!count.compareAndSet(now, now + 1));
        return true;
    }
}
