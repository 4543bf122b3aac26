package io.kvorum.node.hints;

import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.hints.HintStore.Hint;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.storage.StorageFailures;
import io.kvorum.node.time.TimestampAheadException;
import io.kvorum.node.util.Failures;
import io.kvorum.node.util.NodeThreads;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers the hints of a {@link HintStore} to their peers (hinted handoff, docs/operations.md#how-replicas-converge).
 *
 * <p>Every {@code checkInterval}, each peer that has hints and no delivery in progress gets a
 * delivery round: its hints are read in arrival order and sent through the peer's
 * {@link Replica#write}, whose compare-then-write keeps a newer version the peer may hold. The
 * first hint goes alone, as a probe (a peer that is down fails it at once, or at the request
 * timeout); after it, up to {@code window} hints are in flight at once, and no more than
 * {@code windowBytes} of them (at least one), so that a peer that is slow, not down, is not sent
 * hundreds of megabytes of large values at once (nor the heap made to hold them). A hint is
 * deleted only once the peer acknowledged it. The round ends at the first failure (the rest stay
 * stored and the next round retries them) or when the peer's hints are all delivered. A peer
 * coming back is thus served within about one interval plus its channel's reconnection, and hints
 * stored before a restart are delivered the same way, as they are read from disk.
 *
 * <p>Threading: one thread ({@code hint-delivery}) runs the rounds and the store reads; answers
 * arrive on transport threads and are handed back to it. Lifecycle: {@link #start} schedules the
 * rounds; {@link #close} stops them and waits briefly for those in progress. Close this before
 * the store and the replicas.
 */
public final class HintedHandoff implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HintedHandoff.class);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

    private final HintStore store;
    private final Map<String, Replica> peers;
    private final Duration checkInterval;
    private final int window;
    private final long windowBytes;
    private final ScheduledThreadPoolExecutor executor;
    private final Set<String> busy = ConcurrentHashMap.newKeySet();
    private final Set<CompletableFuture<Void>> inProgress = ConcurrentHashMap.newKeySet();
    /** Hints delivered, by peer: {@code kvorum_hints_delivered_total}. */
    private final Map<String, Counter> delivered = new ConcurrentHashMap<>();
    private final NodeMetrics metrics;
    private volatile ScheduledFuture<?> ticks;
    private volatile boolean closing;

    /**
     * @param peers         the replicas hints may be for, by node id (a live map: members that join are
     *                      added to it); hints for others stay until they expire
     * @param checkInterval how often peers with hints are tried
     * @param window        hints in flight to one peer at once
     * @param windowBytes   stored bytes of the hints in flight to one peer at once (one hint may be larger)
     */
    public HintedHandoff(HintStore store, Map<String, Replica> peers, Duration checkInterval, int window,
                         long windowBytes) {
        this(store, peers, checkInterval, window, windowBytes, NodeMetrics.unregistered());
    }

    /** @param metrics where the hints delivered to each peer are counted */
    public HintedHandoff(HintStore store, Map<String, Replica> peers, Duration checkInterval, int window,
                         long windowBytes, NodeMetrics metrics) {
        this.metrics = metrics;
        peers.keySet().forEach(peer -> delivered.put(peer, metrics.hintsDelivered(peer)));
        this.store = store;
        this.peers = peers;
        this.checkInterval = checkInterval;
        this.window = window;
        this.windowBytes = windowBytes;
        this.executor = NodeThreads.scheduled("hint-delivery", 1);
    }

    /** Starts trying every {@code checkInterval}. */
    public void start() {
        long ms = checkInterval.toMillis();
        ticks = executor.scheduleWithFixedDelay(this::deliverPendingNow, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts a round for every peer with hints and no round in progress, and completes when they
     * have ended (successfully or not). For tests and {@link #start}.
     */
    public CompletableFuture<Void> deliverPending() {
        CompletableFuture<CompletableFuture<Void>> started = new CompletableFuture<>();
        try {
            executor.execute(() -> started.complete(deliverPendingNow()));
        } catch (RejectedExecutionException e) {
            started.completeExceptionally(e);
        }
        return started.thenCompose(f -> f);
    }

    /** Hints delivered (acknowledged by their peer) since start. */
    public long delivered() {
        return (long) delivered.values().stream().mapToDouble(Counter::count).sum();
    }

    private CompletableFuture<Void> deliverPendingNow() {
        List<CompletableFuture<Void>> rounds = new ArrayList<>();
        if (closing) {
            return CompletableFuture.completedFuture(null);
        }
        for (String peer : store.pendingByPeer().keySet()) {
            Replica replica = peers.get(peer);
            if (replica != null && busy.add(peer)) {
                CompletableFuture<Void> round = new CompletableFuture<>();
                inProgress.add(round);
                rounds.add(round);
                Round r = new Round(peer, replica, round);
                try {
                    r.next(0, 1);
                } catch (RuntimeException e) {
                    r.failed(e);
                }
            }
        }
        return CompletableFuture.allOf(rounds.toArray(CompletableFuture[]::new));
    }

    /** How a peer answered one hint. */
    private enum Outcome {
        DELIVERED,
        /** Refused for its timestamp: kept for a later round, without stopping this one. */
        REFUSED,
        /** Not taken now; retried in a later round. */
        FAILED
    }

    /** One pass over a peer's hints; it runs on the delivery thread, but may end on any. */
    private final class Round {
        private final String peer;
        private final Replica replica;
        private final CompletableFuture<Void> done;
        private final long startNanos = System.nanoTime();
        private long sent;

        Round(String peer, Replica replica, CompletableFuture<Void> done) {
            this.peer = peer;
            this.replica = replica;
            this.done = done;
        }

        void next(long afterSeq, int size) {
            if (closing) {
                end();
                return;
            }
            List<Hint> hints;
            try {
                hints = store.read(peer, afterSeq, size, windowBytes);
            } catch (RuntimeException e) {
                if (!(e instanceof StorageFailures.Reported)) {
                    log.warn("reading hints for {} failed; will retry", peer, e);
                }
                end();
                return;
            }
            if (hints.isEmpty()) {
                end();
                return;
            }
            List<CompletableFuture<Outcome>> acks = new ArrayList<>(hints.size());
            for (Hint h : hints) {
                acks.add(replica.write(h.key(), h.record()).handle((applied, error) -> error == null ? Outcome.DELIVERED
                        : Failures.unwrap(error) instanceof TimestampAheadException ? Outcome.REFUSED : Outcome.FAILED));
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new))
                    .thenRunAsync(() -> onAnswers(hints, acks), executor)
                    .exceptionally(this::failed);
        }

        private void onAnswers(List<Hint> hints, List<CompletableFuture<Outcome>> acks) {
            List<Hint> acknowledged = new ArrayList<>(hints.size());
            List<Hint> refused = new ArrayList<>();
            for (int i = 0; i < hints.size(); i++) {
                Outcome outcome = acks.get(i).join();
                if (outcome == Outcome.DELIVERED) {
                    acknowledged.add(hints.get(i));
                } else if (outcome == Outcome.REFUSED) {
                    refused.add(hints.get(i));
                }
            }
            boolean allAnswered = acknowledged.size() + refused.size() == hints.size();
            long last = hints.get(hints.size() - 1).seq();
            // A hint its peer refused for its timestamp stays for a later round (the peer's clock may be the
            // wrong one, and be fixed), until --hint-max-age; this round goes on past it rather than stop there.
            store.delete(acknowledged)
                    .whenCompleteAsync((ignored, error) -> {
                if (error == null) {
                    delivered.computeIfAbsent(peer, metrics::hintsDelivered).increment(acknowledged.size());
                    sent += acknowledged.size();
                }
                if (error == null && allAnswered) {
                    next(last, window);
                } else {
                    log.debug("delivering hints to {} stopped after {} delivered ({}); will retry", peer, sent,
                            error != null ? error.toString() : "a write was not acknowledged");
                    end();
                }
            }, executor).exceptionally(this::failed);
        }

        /** The delivery thread is gone (closing) or a bug: end the round, so that a later one may retry. */
        private Void failed(Throwable e) {
            if (!(e.getCause() instanceof RejectedExecutionException)) {
                log.warn("delivering hints to {} failed; will retry", peer, e);
            }
            end();
            return null;
        }

        private void end() {
            if (sent > 0) {
                log.info("delivered {} hint(s) to {} in {} ms; {} left", sent, peer,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), store.pending(peer));
            }
            busy.remove(peer);
            inProgress.remove(done);
            done.complete(null);
        }
    }

    /** Stops starting rounds and waits up to {@link #CLOSE_WAIT} for those in progress. Idempotent. */
    @Override
    public void close() throws InterruptedException {
        closing = true;
        ScheduledFuture<?> t = ticks;
        if (t != null) {
            t.cancel(false);
        }
        try {
            CompletableFuture.allOf(inProgress.toArray(CompletableFuture[]::new))
                    .get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            log.debug("hint delivery still in progress at close; the hints not acknowledged stay stored");
        }
        executor.shutdownNow();
        executor.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }
}
