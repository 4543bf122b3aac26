package io.kvorum.node.transport.grpc;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.coordinator.JoinSelection;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.StorageFailures;
import io.kvorum.node.util.Failures;
import io.kvorum.proto.RangeScanBatch;
import io.kvorum.proto.RangeScanGrpc;
import io.kvorum.proto.RangeScanRequest;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node side of {@code RangeScan.Scan}: streams this node's raw entries of a range to a
 * coordinator that merges them with the other nodes' (docs/http-api.md (ranges)), or the entries a
 * joining node takes from this node ({@link JoinSelection}, docs/architecture.md#how-a-join-moves-records).
 *
 * <p>Flow control is manual: a batch is read from storage only while the call is ready (the
 * coordinator has room for it), and the next read waits for the call's on-ready signal. Each
 * scan holds one storage stream, which holds a LevelDB iterator only while it reads a batch
 * (docs/architecture.md#limits-of-the-peer-port), and which is ended at the end of the range, on a
 * storage error, and when the coordinator cancels the call (it finished with the range, its client
 * went away, or it died). {@link #activeScans()} counts the scans in progress, for tests.
 *
 * <p>Threading: gRPC callbacks (on-ready, on-cancel) and storage completions race; each scan's
 * state and every call on its response observer are guarded by the scan.
 */
public final class RangeService extends RangeScanGrpc.RangeScanImplBase {

    private static final Logger log = LoggerFactory.getLogger(RangeService.class);
    private static final AtomicInteger ACTIVE_SCANS = new AtomicInteger();

    private final RangeSource local;
    private final int maxMessageBytes;

    /**
     * @param local           this node's raw entries
     * @param maxMessageBytes a batch from storage is sent as messages of about this size, so that
     *                        a message stays within the peer's inbound limit
     */
    RangeService(RangeSource local, int maxMessageBytes) {
        this.local = local;
        this.maxMessageBytes = maxMessageBytes;
    }

    /** Scans streaming right now, node-wide in this JVM: tests use it to prove cancelled scans end. */
    public static int activeScans() {
        return ACTIVE_SCANS.get();
    }

    @Override
    public void scan(RangeScanRequest request, StreamObserver<RangeScanBatch> responses) {
        if (request.getStart().isEmpty()) {
            responses.onError(Status.INVALID_ARGUMENT.withDescription("a range needs a start key").asRuntimeException());
            return;
        }
        JoinSelection selection;
        try {
            selection = RangeProtoUtils.selectionOf(request);
        } catch (IllegalArgumentException e) {
            responses.onError(Status.INVALID_ARGUMENT.withDescription("malformed join selection: " + e.getMessage())
                    .asRuntimeException());
            return;
        }
        EntryStream stream = local.open(request.getStart().toByteArray(), RangeProtoUtils.end(request), selection);
        new Scan((ServerCallStreamObserver<RangeScanBatch>) responses, stream).start();
    }

    /** One scan in progress. */
    private final class Scan {
        private final ServerCallStreamObserver<RangeScanBatch> out;
        private final EntryStream stream;
        private boolean reading; // guarded by this
        private boolean over; // guarded by this

        Scan(ServerCallStreamObserver<RangeScanBatch> out, EntryStream stream) {
            this.out = out;
            this.stream = stream;
        }

        void start() {
            ACTIVE_SCANS.incrementAndGet();
            out.setOnCancelHandler(() -> {
                synchronized (this) {
                    if (over) {
                        return;
                    }
                    over = true;
                }
                release();
            });
            out.setOnReadyHandler(this::pull);
            pull();
        }

        /** Reads the next batch, unless one is being read or the coordinator has no room for it. */
        private void pull() {
            synchronized (this) {
                if (reading || over || !out.isReady()) {
                    return; // when it becomes ready, the on-ready handler pulls again
                }
                reading = true;
            }
            stream.next().whenComplete(this::onBatch);
        }

        private void onBatch(List<Entry> batch, Throwable error) {
            synchronized (this) {
                reading = false;
                if (over) {
                    return; // cancelled while the batch was read
                }
                if (error == null && !batch.isEmpty()) {
                    for (RangeScanBatch message : RangeProtoUtils.toRangeScanBatchProtos(batch, maxMessageBytes)) {
                        out.onNext(message);
                    }
                } else {
                    over = true;
                    if (error == null) {
                        out.onCompleted();
                    } else {
                        out.onError(toStatus(error).asRuntimeException());
                    }
                }
            }
            if (error == null && !batch.isEmpty()) {
                pull();
            } else {
                release();
            }
        }

        private void release() {
            stream.close();
            ACTIVE_SCANS.decrementAndGet();
        }
    }

    private static Status toStatus(Throwable error) {
        Throwable t = Failures.unwrap(error);
        if (t instanceof OverloadedException) {
            return Status.RESOURCE_EXHAUSTED.withDescription(t.getMessage());
        }
        if (!(t instanceof StorageFailures.Reported)) {
            log.warn("range scan failed", t);
        }
        return Status.INTERNAL.withDescription(String.valueOf(t.getMessage()));
    }
}
