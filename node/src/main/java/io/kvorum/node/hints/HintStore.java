package io.kvorum.node.hints;

import io.kvorum.node.coordinator.HintSink;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.DiskSpace;
import io.kvorum.node.storage.RecordCodec;
import io.kvorum.node.storage.StorageFailures;
import io.kvorum.node.time.Clock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hints of hinted handoff (docs/operations.md#how-replicas-converge), kept in their own LevelDB database: each is a write that
 * a peer missed, waiting to be delivered to it by {@link HintedHandoff}. This class is the face of
 * three parts: {@link HintQueue} (the bounded queue and its writer thread), {@link HintDatabase}
 * (the hints on disk, laid out by {@link HintCodec}) and {@link HintAccounting} (counts, drops and
 * the drop log).
 *
 * <p>Bounds: per peer, at most {@link Limits#maxBytesPerPeer} bytes (a hint that would exceed it
 * is not stored) and hints no older than {@link Limits#maxAge} (older ones are deleted about once
 * a second of the {@link Clock}, which also times the drop log, so tests can drive both). In front
 * of the database, the queue of hints not yet written is bounded in entries and bytes; a hint that
 * does not fit is dropped. Every drop is counted and logged, at most once every
 * {@link HintAccounting#DROP_LOG_INTERVAL} per peer and reason, naming the peer and how many were
 * dropped: anti-entropy repairs what a dropped hint carried.
 *
 * <p>Threading: {@link #hint} never blocks; it offers to the queue of one writer thread
 * ({@code hint-writer}) that owns every mutation of the database (appends, deletes, expiry) and
 * commits them in batches. {@link #read} blocks on LevelDB and may be called from any thread
 * except Netty and gRPC ones. Futures complete on the writer thread.
 *
 * <p>Durability: a hint is written to LevelDB's log before it counts as stored (with {@code fsync},
 * the log is fsynced), so stored hints survive a crash. {@link #hint}'s future tells when that is
 * done, and the coordinator holds a write's answer until then for the hints it made before the
 * answer (docs/operations.md#hinted-handoff). A hint still in the queue when the process dies is
 * lost, like one dropped.
 *
 * <p>Lifecycle: {@link #open} recovers the stored hints; {@link #close} stops taking hints, writes
 * what is queued, and closes the database.
 */
public final class HintStore implements HintSink, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HintStore.class);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    /**
     * The bounds of a store.
     *
     * @param maxBytesPerPeer stored bytes (keys and values) of one peer's hints
     * @param maxAge          how long a hint is kept undelivered
     * @param queueCapacity   hints and deletes waiting for the writer thread
     * @param queueBytes      bytes of hints waiting for the writer thread
     * @param disk            what hint writes leave free on the data directory's file system
     */
    public record Limits(long maxBytesPerPeer, Duration maxAge, int queueCapacity, long queueBytes, DiskSpace disk) {

        /** Limits that leave the disk unchecked (tests). */
        public Limits(long maxBytesPerPeer, Duration maxAge, int queueCapacity, long queueBytes) {
            this(maxBytesPerPeer, maxAge, queueCapacity, queueBytes, DiskSpace.UNCHECKED);
        }
    }

    /** Why a hint was dropped, as the drop log names it. */
    public enum DropReason {
        PEER_FULL("the peer's hints reached --hint-max-bytes-per-peer"),
        EXPIRED("older than --hint-max-age"),
        QUEUE_FULL("the hint write queue is full"),
        LOW_DISK("the data disk is at --min-free-disk"),
        WRITE_FAILED("writing it to disk failed"),
        SHUTTING_DOWN("the node is shutting down");

        private final String why;

        DropReason(String why) {
            this.why = why;
        }

        /** The reason in words, for the drop log. */
        String why() {
            return why;
        }
    }

    /**
     * One stored hint.
     *
     * @param seq             its place among the hints (per peer: arrival order)
     * @param createdAtMillis when the coordinator stored it, epoch ms; the record is kept as
     *                        {@link RecordCodec} encodes it, so a TTL survives the handoff
     */
    public record Hint(String peer, long seq, byte[] key, Record record, long createdAtMillis) {
    }

    private final HintDatabase database;
    private final HintAccounting accounting;
    private final HintQueue queue;
    private final StorageFailures failures;

    /** Counts the stored hints, and numbers new ones after the largest stored sequence. */
    private HintStore(HintDatabase database, Limits limits, Clock clock, NodeMetrics metrics) {
        this.database = database;
        this.accounting = new HintAccounting(limits.queueBytes(), metrics);
        this.failures = new StorageFailures("hint store", metrics.storageErrors("hints", "read"),
                metrics.storageErrors("hints", "write"));
        long nextSeq = database.recover(accounting) + 1;
        accounting.logRecovered();
        this.queue = new HintQueue(database, accounting, limits, clock, nextSeq, failures);
    }

    /** Opens (creating if needed) the hints in {@code dir}, recovers them, and starts the writer thread. */
    public static HintStore open(Path dir, boolean fsync, Limits limits, Clock clock) throws IOException {
        return open(dir, fsync, limits, clock, NodeMetrics.unregistered());
    }

    /** As {@link #open(Path, boolean, Limits, Clock)}, counting drops by peer in {@code metrics}. */
    public static HintStore open(Path dir, boolean fsync, Limits limits, Clock clock, NodeMetrics metrics)
            throws IOException {
        HintDatabase database = HintDatabase.open(dir, fsync);
        try {
            HintStore store = new HintStore(database, limits, clock, metrics);
            store.queue.start();
            return store;
        } catch (RuntimeException e) {
            database.close();
            throw e;
        }
    }

    /**
     * Queues a hint for writing; drops it (counted and logged) when the queue is full. Never blocks.
     * The future completes once the hint is in LevelDB's log (fsynced with {@code fsync}), or was
     * dropped; on the writer thread, or at once.
     */
    @Override
    public CompletableFuture<Void> hint(String peer, byte[] key, Record record) {
        return queue.hint(peer, key, record);
    }

    /**
     * Up to {@code max} of the peer's stored hints with a sequence above {@code afterSeq}, in
     * arrival order. Blocks on LevelDB: call it off Netty and gRPC threads.
     *
     * @throws IllegalStateException when the store is closed
     */
    public List<Hint> read(String peer, long afterSeq, int max) {
        return read(peer, afterSeq, max, Long.MAX_VALUE);
    }

    /**
     * As {@link #read(String, long, int)}, and no more hints once their stored size reaches
     * {@code maxBytes} (at least one, however large).
     */
    public List<Hint> read(String peer, long afterSeq, int max, long maxBytes) {
        try {
            return database.read(peer, afterSeq, max, maxBytes);
        } catch (RuntimeException e) {
            throw failures.failed(StorageFailures.Op.READ, 1, e);
        }
    }

    /**
     * Deletes hints (those already gone are skipped). Completes once the deletion is durable, or
     * fails when the queue is full or the store is closing; the hints are then still stored.
     */
    public CompletableFuture<Void> delete(List<Hint> hints) {
        return queue.delete(hints);
    }

    /** Completes once every hint and delete queued before this call is written. */
    public CompletableFuture<Void> flush() {
        return queue.flush();
    }

    /** The peers that have stored hints, with how many each, by peer id. */
    public Map<String, Long> pendingByPeer() {
        return accounting.pendingByPeer();
    }

    /** How many hints are stored for {@code peer}. */
    public long pending(String peer) {
        return accounting.pending(peer);
    }

    /** How many bytes the stored hints for {@code peer} take. */
    public long pendingBytes(String peer) {
        return accounting.pendingBytes(peer);
    }

    /** Hints dropped since the store opened, for every peer, by reason. */
    public Map<DropReason, Long> droppedByReason() {
        return accounting.droppedByReason();
    }

    /** Hints dropped since the store opened, for every peer and reason. */
    public long dropped() {
        return droppedByReason().values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * Stops taking hints, writes what is queued, and closes the database. Idempotent.
     *
     * <p>If the writer is still running after {@link #CLOSE_WAIT} (a stuck disk), the database is
     * left open, with an error logged: closing it under the writer would free native memory the
     * writer is using, which can crash the JVM; left open, it costs nothing the process exit does
     * not reclaim, and the hints already written are in LevelDB's log either way.
     */
    @Override
    public void close() throws InterruptedException {
        if (!queue.stop(CLOSE_WAIT)) {
            log.error("hint writer still busy after {} ms; leaving the hint database open rather than closing it "
                    + "under it", CLOSE_WAIT.toMillis());
            return;
        }
        try {
            database.close();
        } catch (IOException e) {
            log.error("closing the hint store failed", e);
        }
    }
}
