package io.kvorum.node.hints;

import io.kvorum.node.hints.HintStore.DropReason;
import io.kvorum.node.metrics.NodeMetrics;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the hints take and what was lost, per peer: the count and bytes of the stored hints (which
 * the per-peer bound is checked against), the bytes of the hints queued for the writer (bounded),
 * and the drops by reason (and by peer in {@code kvorum_hints_dropped_total}). Every drop is counted and logged, at most once every
 * {@link #DROP_LOG_INTERVAL} per peer and reason, naming the peer and how many were dropped.
 *
 * <p>Threading: everything is read by any thread. Stored counts change on the writer thread only
 * (or before it starts); queued bytes and drops change on any thread. {@link #logDrops} runs on the
 * writer thread only.
 */
final class HintAccounting {

    /** The hint store's log: operators know its lines by that name ({@code docs/operations.md}). */
    private static final Logger log = LoggerFactory.getLogger(HintStore.class);
    static final Duration DROP_LOG_INTERVAL = Duration.ofSeconds(10);

    private final long maxQueuedBytes;
    private final AtomicLong queuedBytes = new AtomicLong();
    private final Map<String, PeerState> peers = new ConcurrentHashMap<>();
    private final NodeMetrics metrics;

    HintAccounting(long maxQueuedBytes, NodeMetrics metrics) {
        this.maxQueuedBytes = maxQueuedBytes;
        this.metrics = metrics;
    }

    /** Counts {@code size} bytes as queued if that stays within the bound; returns whether it did. */
    boolean reserveQueued(long size) {
        if (queuedBytes.addAndGet(size) > maxQueuedBytes) {
            queuedBytes.addAndGet(-size);
            return false;
        }
        return true;
    }

    /** Takes back bytes counted by {@link #reserveQueued}: the hint left the queue. */
    void releaseQueued(long size) {
        queuedBytes.addAndGet(-size);
    }

    /** A hint of {@code size} bytes was stored for the peer. */
    void stored(String peer, long size) {
        state(peer).add(size);
    }

    /** A stored hint of {@code size} bytes was deleted. */
    void removed(String peer, long size) {
        state(peer).remove(size);
    }

    void dropped(String peer, DropReason reason, long n) {
        PeerState s = state(peer);
        s.droppedMeter.increment(n);
        DropCount c = s.dropped.get(reason);
        c.total.addAndGet(n);
        c.unlogged.addAndGet(n);
    }

    /** The peers that have stored hints, with how many each, by peer id. */
    Map<String, Long> pendingByPeer() {
        Map<String, Long> out = new TreeMap<>();
        peers.forEach((peer, s) -> {
            long n = s.count.get();
            if (n > 0) {
                out.put(peer, n);
            }
        });
        return out;
    }

    long pending(String peer) {
        PeerState s = peers.get(peer);
        return s == null ? 0 : s.count.get();
    }

    long pendingBytes(String peer) {
        PeerState s = peers.get(peer);
        return s == null ? 0 : s.bytes.get();
    }

    Map<DropReason, Long> droppedByReason() {
        Map<DropReason, Long> out = new EnumMap<>(DropReason.class);
        for (DropReason r : DropReason.values()) {
            out.put(r, peers.values().stream().mapToLong(s -> s.dropped.get(r).total.get()).sum());
        }
        return out;
    }

    /** Logs what {@link #stored} counted so far, per peer: the hints found on disk at start. */
    void logRecovered() {
        peers.forEach((peer, s) -> log.info("{} hints ({} bytes) for {} recovered from disk", s.count.get(),
                s.bytes.get(), peer));
    }

    /**
     * Logs the drops not logged yet, per peer and reason, at most once per {@link #DROP_LOG_INTERVAL}
     * unless {@code all}.
     *
     * @param nowNanos the node's {@code Clock.nanoTime}
     */
    void logDrops(boolean all, long nowNanos) {
        peers.forEach((peer, s) -> s.dropped.forEach((reason, c) -> {
            if (c.unlogged.get() > 0
                    && (all || !c.everLogged || nowNanos - c.lastLogged >= DROP_LOG_INTERVAL.toNanos())) {
                c.lastLogged = nowNanos;
                c.everLogged = true;
                log.warn("dropped {} hint(s) for {}: {} ({} dropped for it since start); "
                        + "anti-entropy repairs what they carried", c.unlogged.getAndSet(0), peer, reason.why(),
                        c.total.get());
            }
        }));
    }

    private PeerState state(String peer) {
        return peers.computeIfAbsent(peer, p -> new PeerState(metrics.hintsDropped(p)));
    }

    /** One peer's stored hints and drops. */
    private static final class PeerState {
        final AtomicLong count = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final Map<DropReason, DropCount> dropped = new EnumMap<>(DropReason.class);
        final Counter droppedMeter;

        PeerState(Counter droppedMeter) {
            this.droppedMeter = droppedMeter;
            for (DropReason r : DropReason.values()) {
                dropped.put(r, new DropCount());
            }
        }

        void add(long size) {
            bytes.addAndGet(size);
            count.incrementAndGet();
        }

        void remove(long size) {
            bytes.addAndGet(-size);
            count.decrementAndGet();
        }
    }

    private static final class DropCount {
        final AtomicLong total = new AtomicLong();
        final AtomicLong unlogged = new AtomicLong();
        long lastLogged; // writer thread only
        boolean everLogged; // writer thread only
    }
}
