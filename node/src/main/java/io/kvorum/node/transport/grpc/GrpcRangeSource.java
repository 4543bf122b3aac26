package io.kvorum.node.transport.grpc;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kvorum.node.coordinator.JoinSelection;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.proto.RangeScanBatch;
import io.kvorum.proto.RangeScanGrpc;
import io.kvorum.proto.RangeScanRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A peer's raw entries of a range, read over a {@code RangeScan.Scan} call: the remote side of a
 * cluster-wide range (docs/http-api.md (ranges)).
 *
 * <p>Each stream is one call, started by its first {@link EntryStream#next()}. Flow control is
 * manual: one message is requested per {@code next()}, so the peer reads storage only as fast as
 * the coordinator's own client consumes the range. Deadline: the call as a whole has none, since
 * a slow client may legitimately read a large range for a long time; instead each requested
 * message has its own timer of the request timeout, after which the call is cancelled and the
 * batch fails with {@link ReplicaUnavailableException}, so a frozen peer cannot hold a range
 * forever. {@link EntryStream#close()} cancels the call, which makes the peer close its iterator.
 *
 * <p>Failures: {@link StorageOverloadedException} when the peer's storage refused the work, and
 * {@link ReplicaUnavailableException} for anything else (down, unreachable, refused us, timed out).
 */
public final class GrpcRangeSource implements RangeSource {

    private final PeerChannel peer;
    private final RangeScanGrpc.RangeScanStub stub;
    private final ScheduledExecutorService timer;
    private final long timeoutNanos;

    /**
     * @param peer           the peer and its channel, shared with its replication stream
     * @param timer          runs the per-message timers
     * @param requestTimeout how long to wait for each message
     */
    public GrpcRangeSource(PeerChannel peer, ScheduledExecutorService timer, Duration requestTimeout) {
        this.peer = peer;
        this.stub = RangeScanGrpc.newStub(peer.channel());
        this.timer = timer;
        this.timeoutNanos = requestTimeout.toNanos();
    }

    @Override
    public EntryStream open(byte[] start, byte[] end) {
        return open(start, end, null);
    }

    /** The peer applies {@code selection} to its entries before it sends them. */
    @Override
    public EntryStream open(byte[] start, byte[] end, JoinSelection selection) {
        RangeScanRequest.Builder request = RangeProtoUtils.toRangeScanRequestProto(start, end)
                .setHeader(peer.header(TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
        if (selection != null) {
            request.setJoin(RangeProtoUtils.toProto(selection));
        }
        return new Stream(request.build());
    }

    /**
     * One scan call. Its state is guarded by the stream; futures are completed and the call is
     * cancelled outside that lock, because both may run a caller's continuation on this thread.
     */
    private final class Stream implements EntryStream, ClientResponseObserver<RangeScanRequest, RangeScanBatch> {
        private final RangeScanRequest request;
        private ClientCallStreamObserver<RangeScanRequest> call; // set once the call has started
        private CompletableFuture<List<Entry>> pending;
        private ScheduledFuture<?> pendingTimer;
        private boolean ended;
        private RuntimeException failure;
        private boolean closed;

        Stream(RangeScanRequest request) {
            this.request = request;
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            CompletableFuture<List<Entry>> batch = new CompletableFuture<>();
            ClientCallStreamObserver<RangeScanRequest> started;
            synchronized (this) {
                if (closed) {
                    return CompletableFuture.failedFuture(new CancellationException("range scan closed"));
                }
                if (failure != null) {
                    return CompletableFuture.failedFuture(failure);
                }
                if (ended) {
                    return CompletableFuture.completedFuture(List.of());
                }
                if (pending != null) {
                    throw new IllegalStateException("next() called before the previous batch arrived");
                }
                try {
                    pendingTimer = timer.schedule(() -> onTimeout(batch), timeoutNanos, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    return CompletableFuture.failedFuture(new ReplicaUnavailableException("the node is shutting down"));
                }
                pending = batch;
                started = call;
            }
            if (started != null) {
                started.request(1);
                return batch;
            }
            stub.scan(request, this); // beforeStart() requests the first message
            ClientCallStreamObserver<RangeScanRequest> closedMeanwhile;
            synchronized (this) {
                closedMeanwhile = closed ? call : null;
            }
            if (closedMeanwhile != null) {
                closedMeanwhile.cancel("range scan closed", null); // close() ran before the call existed
            }
            return batch;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<RangeScanRequest> requestStream) {
            requestStream.disableAutoRequestWithInitial(1);
            synchronized (this) {
                call = requestStream;
            }
        }

        @Override
        public void onNext(RangeScanBatch message) {
            List<Entry> entries;
            try {
                entries = RangeProtoUtils.toEntries(message);
            } catch (IllegalArgumentException e) {
                fail(new ReplicaUnavailableException(
                        peer.peerId() + " sent a malformed range batch: " + e.getMessage()), true);
                return;
            }
            CompletableFuture<List<Entry>> batch = takePending();
            if (batch != null) {
                batch.complete(entries);
            }
        }

        @Override
        public void onError(Throwable t) {
            Status status = Status.fromThrowable(t);
            fail(switch (status.getCode()) {
                case RESOURCE_EXHAUSTED -> new OverloadedException(peer.peerId() + " is overloaded: "
                        + status.getDescription());
                default -> new ReplicaUnavailableException(peer.peerId() + " failed the range scan: " + status.getCode()
                        + (status.getDescription() != null ? " " + status.getDescription() : ""));
            }, false);
        }

        @Override
        public void onCompleted() {
            CompletableFuture<List<Entry>> batch;
            synchronized (this) {
                ended = true;
                batch = takePending();
            }
            if (batch != null) {
                batch.complete(List.of());
            }
        }

        private void onTimeout(CompletableFuture<List<Entry>> batch) {
            synchronized (this) {
                if (pending != batch) {
                    return; // it arrived in time
                }
            }
            fail(new ReplicaUnavailableException(peer.peerId() + " sent no range batch within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"), true);
        }

        /** Fails the batch awaited, and every later one; {@code cancel}: also cancels the call. */
        private void fail(RuntimeException e, boolean cancel) {
            CompletableFuture<List<Entry>> batch;
            ClientCallStreamObserver<RangeScanRequest> toCancel;
            synchronized (this) {
                if (failure == null) {
                    failure = e;
                }
                batch = takePending();
                toCancel = cancel ? call : null;
            }
            if (toCancel != null) {
                toCancel.cancel(e.getMessage(), null);
            }
            if (batch != null) {
                batch.completeExceptionally(e);
            }
        }

        private synchronized CompletableFuture<List<Entry>> takePending() {
            CompletableFuture<List<Entry>> batch = pending;
            pending = null;
            if (pendingTimer != null) {
                pendingTimer.cancel(false);
                pendingTimer = null;
            }
            return batch;
        }

        @Override
        public void close() {
            CompletableFuture<List<Entry>> batch;
            ClientCallStreamObserver<RangeScanRequest> toCancel;
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                batch = takePending();
                toCancel = ended || failure != null ? null : call;
            }
            if (toCancel != null) {
                toCancel.cancel("range scan closed", null);
            }
            if (batch != null) {
                batch.completeExceptionally(new CancellationException("range scan closed"));
            }
        }
    }
}
