package io.kvorum.node.hints;

import static org.fusesource.leveldbjni.JniDBFactory.factory;

import io.kvorum.node.coordinator.HintSink;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.RecordCodec;
import io.kvorum.node.time.Clock;
import io.kvorum.node.util.NodeThreads;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hints of hinted handoff (SPEC §3), kept in their own LevelDB database: each is a write that
 * a peer missed, waiting to be delivered to it by {@link HintedHandoff}.
 *
 * <p>Layout: the LevelDB key is the peer id (UTF-8; node ids never contain a zero byte), a zero
 * byte, and a big-endian sequence number, so that one peer's hints are contiguous and iterate in
 * arrival order. The sequence continues after a restart (it is recovered as the largest stored one
 * plus one). The value is a format byte, the hint's creation time (epoch ms), the key, and the
 * {@link RecordCodec} record, whose expiry keeps a TTL across the handoff.
 *
 * <p>Bounds: per peer, at most {@link Limits#maxBytesPerPeer} bytes (a hint that would exceed it
 * is not stored) and hints no older than {@link Limits#maxAge} (older ones are deleted about once
 * a second of the {@link Clock}, which also times the drop log, so tests can drive both). In front of the database, the queue of hints not yet written is bounded in entries
 * and bytes; a hint that does not fit is dropped. Every drop is counted and logged, at most once
 * every {@link #DROP_LOG_INTERVAL} per peer and reason, naming the peer and how many were dropped:
 * anti-entropy repairs what a dropped hint carried.
 *
 * <p>Threading: {@link #hint} never blocks; it offers to the queue of one writer thread
 * ({@code hint-writer}) that owns every mutation of the database (appends, deletes, expiry) and
 * commits them in batches. {@link #read} blocks on LevelDB and may be called from any thread
 * except Netty and gRPC ones. Futures complete on the writer thread.
 *
 * <p>Durability: a hint is written to LevelDB's log before it counts as stored (with {@code fsync},
 * the log is fsynced), so stored hints survive a crash. A hint still in the queue when the process
 * dies is lost, like one dropped.
 *
 * <p>Lifecycle: {@link #open} recovers the stored hints; {@link #close} stops taking hints, writes
 * what is queued, and closes the database.
 */
public final class HintStore implements HintSink, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HintStore.class);
    static final Duration DROP_LOG_INTERVAL = Duration.ofSeconds(10);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final long HOUSEKEEPING_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final byte FORMAT_V1 = 1;
    private static final int MAX_BATCH = 256;
    private static final int MAX_EXPIRED_PER_SWEEP = 10_000;
    private static final int EXPIRY_PAGE = 32;

    /**
     * The bounds of a store.
     *
     * @param maxBytesPerPeer stored bytes (keys and values) of one peer's hints
     * @param maxAge          how long a hint is kept undelivered
     * @param queueCapacity   hints and deletes waiting for the writer thread
     * @param queueBytes      bytes of hints waiting for the writer thread
     */
    public record Limits(long maxBytesPerPeer, Duration maxAge, int queueCapacity, long queueBytes) {
    }

    /** Why a hint was dropped, as the drop log names it. */
    public enum DropReason {
        PEER_FULL("the peer's hints reached --hint-max-bytes-per-peer"),
        EXPIRED("older than --hint-max-age"),
        QUEUE_FULL("the hint write queue is full"),
        WRITE_FAILED("writing it to disk failed"),
        SHUTTING_DOWN("the node is shutting down");

        private final String why;

        DropReason(String why) {
            this.why = why;
        }
    }

    /**
     * One stored hint.
     *
     * @param seq             its place among the hints (per peer: arrival order)
     * @param createdAtMillis when the coordinator stored it, epoch ms
     */
    public record Hint(String peer, long seq, byte[] key, Record record, long createdAtMillis) {
    }

    private final DB db;
    private final WriteOptions writeOptions;
    private final Limits limits;
    private final Clock clock;
    private final BlockingQueue<Op> queue;
    private final AtomicLong queuedBytes = new AtomicLong();
    private final Map<String, PeerState> peers = new ConcurrentHashMap<>();
    private final ReadWriteLock dbLock = new ReentrantReadWriteLock();
    private final Thread writer;
    private long nextSeq; // writer thread only, after open
    private long lastHousekeeping; // writer thread only, after open; Clock#nanoTime
    private volatile boolean closing;
    private volatile boolean writerDone;
    private boolean closed; // guarded by dbLock

    private HintStore(DB db, boolean fsync, Limits limits, Clock clock) {
        this.db = db;
        this.writeOptions = new WriteOptions().sync(fsync);
        this.limits = limits;
        this.clock = clock;
        this.queue = new ArrayBlockingQueue<>(limits.queueCapacity());
        recover();
        this.lastHousekeeping = clock.nanoTime();
        this.writer = NodeThreads.single("hint-writer", this::writeLoop);
        this.writer.start();
    }

    /** Opens (creating if needed) the hints in {@code dir} and starts the writer thread. */
    public static HintStore open(Path dir, boolean fsync, Limits limits, Clock clock) throws IOException {
        Files.createDirectories(dir);
        Options options = new Options()
                .createIfMissing(true)
                .paranoidChecks(true)
                .compressionType(CompressionType.SNAPPY)
                .cacheSize(8L << 20)
                .writeBufferSize(4 << 20);
        return new HintStore(factory.open(dir.toFile(), options), fsync, limits, clock);
    }

    /** Counts the stored hints per peer and finds where the sequence continues. */
    private void recover() {
        long maxSeq = 0;
        try (DBIterator it = db.iterator()) {
            for (it.seekToFirst(); it.hasNext(); ) {
                Map.Entry<byte[], byte[]> e = it.next();
                byte[] k = e.getKey();
                maxSeq = Math.max(maxSeq, seqOf(k));
                state(peerOf(k)).add(k.length + e.getValue().length);
            }
        } catch (IOException e) {
            throw new IllegalStateException("closing an iterator failed", e);
        }
        nextSeq = maxSeq + 1;
        peers.forEach((peer, s) -> log.info("{} hints ({} bytes) for {} recovered from disk", s.count.get(),
                s.bytes.get(), peer));
    }

    /** Queues a hint for writing; drops it (counted and logged) when the queue is full. Never blocks. */
    @Override
    public void hint(String peer, byte[] key, Record record) {
        long size = key.length + record.value().length + 64L;
        if (closing) {
            dropped(peer, DropReason.SHUTTING_DOWN, 1);
            return;
        }
        if (queuedBytes.addAndGet(size) > limits.queueBytes()
                || !queue.offer(new Op.Append(peer, key, record, clock.currentTimeMillis(), size))) {
            queuedBytes.addAndGet(-size);
            dropped(peer, DropReason.QUEUE_FULL, 1);
            return;
        }
        if (writerDone) {
            failQueued(); // offered after the writer's last look at the queue
        }
    }

    /**
     * Up to {@code max} of the peer's stored hints with a sequence above {@code afterSeq}, in
     * arrival order. Blocks on LevelDB: call it off Netty and gRPC threads.
     *
     * @throws IllegalStateException when the store is closed
     */
    public List<Hint> read(String peer, long afterSeq, int max) {
        byte[] start = dbKey(peer, afterSeq + 1);
        byte[] prefix = Arrays.copyOf(start, start.length - Long.BYTES);
        List<Hint> out = new ArrayList<>(Math.min(max, 64));
        dbLock.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("the hint store is closed");
            }
            try (DBIterator it = db.iterator()) {
                it.seek(start);
                while (out.size() < max && it.hasNext()) {
                    Map.Entry<byte[], byte[]> e;
                    try {
                        e = it.next();
                    } catch (NoSuchElementException ignored) {
                        break;
                    }
                    if (!startsWith(e.getKey(), prefix)) {
                        break;
                    }
                    out.add(decode(peer, seqOf(e.getKey()), e.getValue()));
                }
            } catch (IOException e) {
                throw new IllegalStateException("closing an iterator failed", e);
            }
        } finally {
            dbLock.readLock().unlock();
        }
        return out;
    }

    /**
     * Deletes hints (those already gone are skipped). Completes once the deletion is durable, or
     * fails when the queue is full or the store is closing; the hints are then still stored.
     */
    public CompletableFuture<Void> delete(List<Hint> hints) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (hints.isEmpty()) {
            done.complete(null);
        } else {
            submit(new Op.Delete(List.copyOf(hints), done));
        }
        return done;
    }

    /** Completes once every hint and delete queued before this call is written. */
    public CompletableFuture<Void> flush() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        submit(new Op.Delete(List.of(), done)); // deletes nothing, completes after what is ahead of it
        return done;
    }

    private void submit(Op op) {
        if (closing || !queue.offer(op)) {
            op.fail(closing ? "the hint store is closing" : "the hint write queue is full");
        } else if (writerDone) {
            failQueued();
        }
    }

    /** The peers that have stored hints, with how many each, by peer id. */
    public Map<String, Long> pendingByPeer() {
        Map<String, Long> out = new TreeMap<>();
        peers.forEach((peer, s) -> {
            long n = s.count.get();
            if (n > 0) {
                out.put(peer, n);
            }
        });
        return out;
    }

    /** How many hints are stored for {@code peer}. */
    public long pending(String peer) {
        PeerState s = peers.get(peer);
        return s == null ? 0 : s.count.get();
    }

    /** How many bytes the stored hints for {@code peer} take. */
    public long pendingBytes(String peer) {
        PeerState s = peers.get(peer);
        return s == null ? 0 : s.bytes.get();
    }

    /** Hints dropped since the store opened, for every peer, by reason. */
    public Map<DropReason, Long> droppedByReason() {
        Map<DropReason, Long> out = new EnumMap<>(DropReason.class);
        for (DropReason r : DropReason.values()) {
            out.put(r, peers.values().stream().mapToLong(s -> s.dropped.get(r).total.get()).sum());
        }
        return out;
    }

    /** Hints dropped since the store opened, for every peer and reason. */
    public long dropped() {
        return droppedByReason().values().stream().mapToLong(Long::longValue).sum();
    }

    private void dropped(String peer, DropReason reason, long n) {
        DropCount c = state(peer).dropped.get(reason);
        c.total.addAndGet(n);
        c.unlogged.addAndGet(n);
    }

    private PeerState state(String peer) {
        return peers.computeIfAbsent(peer, p -> new PeerState());
    }

    // ---- writer thread ----

    private void writeLoop() {
        List<Op> batch = new ArrayList<>(MAX_BATCH);
        while (true) {
            try {
                Op first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first != null) {
                    batch.add(first);
                    queue.drainTo(batch, MAX_BATCH - 1);
                    commit(batch);
                    batch.clear();
                } else if (closing) {
                    writerDone = true;
                    failQueued();
                    logDrops(true);
                    return;
                }
                long now = clock.nanoTime();
                if (now - lastHousekeeping >= HOUSEKEEPING_INTERVAL_NANOS) {
                    lastHousekeeping = now;
                    expireOld();
                    logDrops(false);
                }
            } catch (InterruptedException e) {
                writerDone = true;
                failQueued();
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.error("hint writer failed; continuing", e);
            }
        }
    }

    private void failQueued() {
        Op op;
        while ((op = queue.poll()) != null) {
            if (op instanceof Op.Append a) {
                queuedBytes.addAndGet(-a.size());
                dropped(a.peer(), DropReason.SHUTTING_DOWN, 1);
            } else {
                op.fail("the hint store is closing");
            }
        }
    }

    private void commit(List<Op> ops) {
        List<Runnable> onCommit = new ArrayList<>();
        List<Op> committed = new ArrayList<>();
        Map<String, Long> bytesInBatch = new java.util.HashMap<>();
        try (WriteBatch batch = db.createWriteBatch()) {
            for (Op op : ops) {
                if (op instanceof Op.Append a) {
                    queuedBytes.addAndGet(-a.size());
                    PeerState s = state(a.peer());
                    byte[] k = dbKey(a.peer(), nextSeq);
                    byte[] v = encode(a.key(), a.record(), a.createdAtMillis());
                    long size = k.length + v.length;
                    long inBatch = bytesInBatch.getOrDefault(a.peer(), 0L);
                    if (s.bytes.get() + inBatch + size > limits.maxBytesPerPeer()) {
                        dropped(a.peer(), DropReason.PEER_FULL, 1);
                        continue;
                    }
                    nextSeq++;
                    bytesInBatch.put(a.peer(), inBatch + size);
                    batch.put(k, v);
                    onCommit.add(() -> s.add(size));
                } else if (op instanceof Op.Delete d) {
                    for (Hint h : d.hints()) {
                        byte[] k = dbKey(h.peer(), h.seq());
                        byte[] v = db.get(k);
                        if (v != null) {
                            batch.delete(k);
                            PeerState s = state(h.peer());
                            long size = k.length + v.length;
                            onCommit.add(() -> s.remove(size));
                        }
                    }
                }
                committed.add(op);
            }
            db.write(batch, writeOptions);
        } catch (IOException | RuntimeException e) {
            log.error("writing {} hint operations failed", ops.size(), e);
            for (Op op : ops) {
                if (op instanceof Op.Append a) {
                    dropped(a.peer(), DropReason.WRITE_FAILED, 1);
                } else {
                    op.fail("writing hints failed: " + e);
                }
            }
            return;
        }
        onCommit.forEach(Runnable::run);
        committed.forEach(Op::succeed);
    }

    /**
     * Deletes hints older than the age bound, from the head of each peer's hints (arrival order,
     * which is creation order unless the wall clock went back). At most
     * {@link #MAX_EXPIRED_PER_SWEEP} per sweep, so that the writer stays responsive.
     */
    private void expireOld() {
        long oldestKept = clock.currentTimeMillis() - limits.maxAge().toMillis();
        for (Map.Entry<String, PeerState> peer : peers.entrySet()) {
            if (peer.getValue().count.get() == 0) {
                continue;
            }
            List<Hint> expired = new ArrayList<>();
            long after = 0;
            boolean more = true;
            while (more && expired.size() < MAX_EXPIRED_PER_SWEEP) {
                // In small pages: usually the first hint is young, and that is all there is to read.
                List<Hint> page = read(peer.getKey(), after, EXPIRY_PAGE);
                more = page.size() == EXPIRY_PAGE;
                for (Hint h : page) {
                    if (h.createdAtMillis() >= oldestKept) {
                        more = false;
                        break;
                    }
                    expired.add(h);
                    after = h.seq();
                }
            }
            if (!expired.isEmpty()) {
                commit(List.of(new Op.Delete(expired, new CompletableFuture<>())));
                dropped(peer.getKey(), DropReason.EXPIRED, expired.size());
            }
        }
    }

    /** Logs the drops not logged yet, per peer and reason, at most once per {@link #DROP_LOG_INTERVAL}. */
    private void logDrops(boolean all) {
        long now = clock.nanoTime();
        peers.forEach((peer, s) -> s.dropped.forEach((reason, c) -> {
            if (c.unlogged.get() > 0 && (all || !c.everLogged || now - c.lastLogged >= DROP_LOG_INTERVAL.toNanos())) {
                c.lastLogged = now;
                c.everLogged = true;
                log.warn("dropped {} hint(s) for {}: {} ({} dropped for it since start); "
                        + "anti-entropy repairs what they carried", c.unlogged.getAndSet(0), peer, reason.why, c.total.get());
            }
        }));
    }

    // ---- encoding ----

    static byte[] dbKey(String peer, long seq) {
        byte[] id = peer.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(id.length + 1 + Long.BYTES).put(id).put((byte) 0).putLong(seq).array();
    }

    private static String peerOf(byte[] dbKey) {
        return new String(dbKey, 0, dbKey.length - 1 - Long.BYTES, StandardCharsets.UTF_8);
    }

    private static long seqOf(byte[] dbKey) {
        return ByteBuffer.wrap(dbKey, dbKey.length - Long.BYTES, Long.BYTES).getLong();
    }

    private static boolean startsWith(byte[] bytes, byte[] prefix) {
        return bytes.length >= prefix.length
                && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
    }

    private static byte[] encode(byte[] key, Record record, long createdAtMillis) {
        byte[] r = RecordCodec.encode(record);
        return ByteBuffer.allocate(1 + Long.BYTES + Integer.BYTES + key.length + r.length)
                .put(FORMAT_V1).putLong(createdAtMillis).putInt(key.length).put(key).put(r).array();
    }

    private static Hint decode(String peer, long seq, byte[] value) {
        ByteBuffer in = ByteBuffer.wrap(value);
        byte format = in.get();
        if (format != FORMAT_V1) {
            throw new IllegalStateException("unknown hint format " + format + " for " + peer + " #" + seq);
        }
        long createdAt = in.getLong();
        byte[] key = new byte[in.getInt()];
        in.get(key);
        byte[] record = new byte[in.remaining()];
        in.get(record);
        return new Hint(peer, seq, key, RecordCodec.decode(record), createdAt);
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
        closing = true;
        writer.join(CLOSE_WAIT.toMillis());
        if (writer.isAlive()) {
            log.error("hint writer still busy after {} ms; leaving the hint database open rather than closing it "
                    + "under it", CLOSE_WAIT.toMillis());
            return;
        }
        dbLock.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                db.close();
            }
        } catch (IOException e) {
            log.error("closing the hint store failed", e);
        } finally {
            dbLock.writeLock().unlock();
        }
    }

    /** One peer's stored hints and drops. Counters are read by any thread, changed by the writer. */
    private static final class PeerState {
        final AtomicLong count = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final Map<DropReason, DropCount> dropped = new EnumMap<>(DropReason.class);
        PeerState() {
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

    /** Work for the writer thread. */
    private sealed interface Op permits Op.Append, Op.Delete {

        default void succeed() {
        }

        default void fail(String why) {
        }

        record Append(String peer, byte[] key, Record record, long createdAtMillis, long size) implements Op {
        }

        record Delete(List<Hint> hints, CompletableFuture<Void> done) implements Op {
            @Override
            public void succeed() {
                done.complete(null);
            }

            @Override
            public void fail(String why) {
                done.completeExceptionally(new IllegalStateException(why));
            }
        }
    }
}
