package io.kvorum.node.antientropy;

import io.kvorum.node.antientropy.AntiEntropyMessage.Done;
import io.kvorum.node.antientropy.AntiEntropyMessage.Records;
import io.kvorum.node.antientropy.RepairException.Reason;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One side of one anti-entropy round: what the initiator and the responder share. That is the
 * record exchange once the differing buckets are known (each side streams its records of those
 * buckets to the other and applies what it receives), the idle timeout, the counters, and the
 * result.
 *
 * <p>Flow control and memory: records are read from storage one scan batch at a time, and the next
 * batch only once the previous one is sent; messages go out only while the stream
 * {@linkplain AntiEntropyStream#isReady is ready}, at most {@value #MAX_RECORDS_PER_MESSAGE} records
 * or about {@value #MAX_MESSAGE_BYTES} bytes each (or one larger record). Inbound, the next message
 * is requested only once the previous one was handled, received records once they are durable. So
 * a side holds about one scan batch, one message and the tree, whatever the amount of data.
 *
 * <p>Threading: every event (a message, readiness, the peer closing, a storage completion, the
 * idle check) runs on the session's own serial executor, which confines all state; the public
 * {@code on*} methods may be called from any thread. The counters of bytes are atomic.
 *
 * <p>Lifecycle: created, then started on a stream by the subclass, then it ends exactly once:
 * {@link #result()} completes with the round's {@link RoundStats}, or fails with a
 * {@link RepairException}. Ending closes the storage scans, stops the idle check and, on failure,
 * aborts the stream.
 */
public abstract class AntiEntropySession {

    /**
     * Told of the records a round moves as it moves them, so that a long round's progress shows
     * before it ends, and a round that fails still counts what it moved. Called on the session's
     * executor.
     */
    public interface RecordFlow {
        /** {@code records} were sent to the peer. */
        void sent(int records);

        /** {@code records} were received from the peer (and are being applied). */
        void received(int records);
    }

    static final int MAX_RECORDS_PER_MESSAGE = 256;
    static final int MAX_MESSAGE_BYTES = 256 * 1024;
    /** Bytes a record adds to a message besides its key and value (an upper bound). */
    private static final int RECORD_OVERHEAD_BYTES = 128;

    protected final String peerId;
    protected final RepairScope scope;
    protected final int fanoutBits;
    protected final int depth;
    protected final RepairStorage storage;
    private final RecordFlow flow;
    protected final SerialExecutor serial;
    protected AntiEntropyStream stream;
    protected CompletableFuture<MerkleTree> tree;
    protected long bucketsCompared;
    protected long bucketsDiffering;

    private final ScheduledExecutorService timer;
    private final long idleNanos;
    private final CompletableFuture<RoundStats> result = new CompletableFuture<>();
    private final AtomicLong bytesSent = new AtomicLong();
    private final AtomicLong bytesReceived = new AtomicLong();
    private final long startNanos = System.nanoTime();
    /** A timestamp past every record stored when the round started; newer ones wait for the next round. */
    private final long roundStart;
    private volatile long lastActivityNanos = startNanos;
    private ScheduledFuture<?> idleCheck;

    private EntryStream outgoingSource;
    private final ArrayDeque<Entry> outgoing = new ArrayDeque<>();
    private boolean fetching;
    private boolean sourceEnded;
    private boolean sentDone;
    private long recordsSent;

    private boolean applying;
    private boolean receivedDone;
    private boolean peerClosed;
    private long recordsReceived;

    AntiEntropySession(String peerId, RepairScope scope, int fanoutBits, int depth, RepairStorage storage,
                       RecordFlow flow, Executor executor, ScheduledExecutorService timer, Duration idleTimeout) {
        this.peerId = peerId;
        this.scope = scope;
        this.fanoutBits = fanoutBits;
        this.depth = depth;
        this.storage = storage;
        this.flow = flow;
        this.serial = new SerialExecutor(executor);
        this.timer = timer;
        this.idleNanos = idleTimeout.toNanos();
        this.roundStart = storage.now();
    }

    /** A hybrid timestamp taken as the round was created: records newer than it are not sent. */
    public long roundStart() {
        return roundStart;
    }

    /** The other node of the round. */
    public String peerId() {
        return peerId;
    }

    /** Completes once the round ended on both sides; fails with a {@link RepairException}. */
    public CompletableFuture<RoundStats> result() {
        return result;
    }

    /** A message arrived (one that was requested). */
    public void onMessage(AntiEntropyMessage message) {
        lastActivityNanos = System.nanoTime();
        inSession(() -> handle(message));
    }

    /** The stream became ready for more messages. */
    public void onReady() {
        inSession(this::pump);
    }

    /** The peer ended its side of the stream normally. */
    public void onPeerClosed() {
        inSession(() -> {
            peerClosed = true;
            if (!receivedDone || !peerMayCloseNow()) {
                throw protocol("the peer ended the round before it was over");
            }
            maybeFinish();
        });
    }

    /** The stream failed (the peer went away, the deadline passed, the peer refused). */
    public void onPeerFailed(RepairException error) {
        serial.execute(() -> end(error, false));
    }

    /** Stops the round, e.g. at shutdown; the peer sees an error. */
    public void cancel(String why) {
        serial.execute(() -> end(new RepairException(Reason.CANCELLED, why), true));
    }

    /** Counts the serialized size of a message sent; thread-safe. */
    public void countBytesSent(long bytes) {
        bytesSent.addAndGet(bytes);
    }

    /** Counts the serialized size of a message received; thread-safe. */
    public void countBytesReceived(long bytes) {
        bytesReceived.addAndGet(bytes);
    }

    /** Handles one requested message; on the serial executor. Throw {@link #protocol} on a message out of order. */
    protected abstract void handle(AntiEntropyMessage message);

    /** Whether, besides having received the peer's done, this side expects the peer to close now. */
    protected abstract boolean peerMayCloseNow();

    /** Called once when this side has sent its done. */
    protected abstract void onSentDone();

    /** Ends the round successfully if both directions are over; subclasses decide what "over" means. */
    protected abstract void maybeFinish();

    /** Binds the stream and starts the idle check; on the serial executor, once. */
    protected final void bind(AntiEntropyStream stream) {
        this.stream = stream;
        long period = Math.max(idleNanos / 4, TimeUnit.MILLISECONDS.toNanos(10));
        try {
            idleCheck = timer.scheduleWithFixedDelay(() -> {
                long idle = System.nanoTime() - lastActivityNanos;
                if (idle > idleNanos) {
                    serial.execute(() -> end(new RepairException(Reason.TIMEOUT, peerId + " was silent for "
                            + Duration.ofNanos(idle).toMillis() + " ms"), true));
                }
            }, period, period, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            end(new RepairException(Reason.CANCELLED, "anti-entropy is shutting down"), true);
        }
    }

    /** Runs an event on the serial executor unless the round is over; failures end the round. */
    protected final void inSession(Runnable event) {
        serial.execute(() -> {
            if (result.isDone()) {
                return;
            }
            try {
                event.run();
            } catch (RuntimeException e) {
                end(RepairException.of(e), true);
            }
        });
    }

    /** Runs {@code event} in the session after {@code delay}, unless the round is over by then. */
    protected final void after(Duration delay, Runnable event) {
        lastActivityNanos = System.nanoTime() + delay.toNanos(); // waiting on purpose is not idleness
        try {
            timer.schedule(() -> inSession(event), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            end(new RepairException(Reason.CANCELLED, "anti-entropy is shutting down"), true);
        }
    }

    /** Sends a message and counts it as activity. */
    protected final void send(AntiEntropyMessage message) {
        lastActivityNanos = System.nanoTime();
        stream.send(message);
    }

    protected final void received() {
        stream.request(1);
    }

    protected static RepairException protocol(String what) {
        return new RepairException(Reason.PROTOCOL, what);
    }

    /** Starts streaming this side's records of {@code buckets} to the peer. */
    protected final void startSending(BitSet buckets) {
        outgoingSource = storage.recordsOf(scope, fanoutBits, depth, buckets, roundStart);
        fetch();
    }

    private void fetch() {
        fetching = true;
        outgoingSource.next().whenComplete((batch, error) -> inSession(() -> {
            fetching = false;
            if (error != null) {
                throw RepairException.of(error);
            }
            if (batch.isEmpty()) {
                sourceEnded = true;
            } else {
                outgoing.addAll(batch);
            }
            pump();
        }));
    }

    /** Sends what is ready to go while the stream takes it; fetches more, or sends done, when out. */
    private void pump() {
        if (outgoingSource == null || sentDone) {
            return;
        }
        while (!outgoing.isEmpty() && stream.isReady()) {
            List<Entry> message = new ArrayList<>();
            long bytes = 0;
            while (!outgoing.isEmpty() && message.size() < MAX_RECORDS_PER_MESSAGE
                    && (message.isEmpty() || bytes + size(outgoing.peek()) <= MAX_MESSAGE_BYTES)) {
                Entry e = outgoing.poll();
                message.add(e);
                bytes += size(e);
            }
            send(new Records(message));
            recordsSent += message.size();
            flow.sent(message.size());
        }
        if (!outgoing.isEmpty() || fetching) {
            return;
        }
        if (!sourceEnded) {
            fetch();
            return;
        }
        outgoingSource.close();
        send(new Done());
        sentDone = true;
        onSentDone();
        maybeFinish();
    }

    private static long size(Entry e) {
        return (long) e.key().length + e.record().value().length + e.record().writer().length() + RECORD_OVERHEAD_BYTES;
    }

    /** Applies a batch of the peer's records, then asks for the next message. */
    protected final void receiveRecords(List<Entry> entries) {
        if (receivedDone) {
            throw protocol("records after done");
        }
        applying = true;
        recordsReceived += entries.size();
        flow.received(entries.size());
        storage.apply(entries).whenComplete((applied, error) -> inSession(() -> {
            applying = false;
            if (error != null) {
                throw RepairException.of(error);
            }
            received();
            maybeFinish();
        }));
    }

    protected final void receiveDone() {
        if (receivedDone) {
            throw protocol("done twice");
        }
        receivedDone = true;
        received();
        maybeFinish();
    }

    /** Whether both directions of the record exchange are over and every received record is applied. */
    protected final boolean exchangeOver() {
        return sentDone && receivedDone && !applying;
    }

    protected final boolean peerClosed() {
        return peerClosed;
    }

    /** Ends the round successfully. */
    protected final void succeed() {
        if (result.isDone()) {
            return;
        }
        release();
        result.complete(new RoundStats(peerId, bucketsCompared, bucketsDiffering, recordsSent, recordsReceived,
                bytesSent.get(), bytesReceived.get(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)));
    }

    /** Ends the round with {@code error}; {@code abort}: tell the peer (its stream may still be open). */
    private void end(RepairException error, boolean abort) {
        if (result.isDone()) {
            return;
        }
        release();
        if (abort && stream != null) {
            stream.abort(error);
        }
        result.completeExceptionally(error);
    }

    private void release() {
        if (idleCheck != null) {
            idleCheck.cancel(false);
        }
        if (outgoingSource != null) {
            outgoingSource.close();
        }
        if (tree != null) {
            tree.cancel(false); // stops a scan still in progress; nothing once the tree is built
        }
    }
}
