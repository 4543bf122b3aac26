package io.kvorum.node.transport.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.Record;
import io.kvorum.node.rebuild.RebuildingException;
import io.kvorum.node.storage.StorageExpiredException;
import io.kvorum.node.storage.StorageFailures;
import io.kvorum.node.time.TimestampAheadException;
import io.kvorum.node.util.Failures;
import io.kvorum.proto.ReadResult;
import io.kvorum.proto.ReplicaError;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import io.kvorum.proto.RequestHeader;
import io.kvorum.proto.WriteResult;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replica side of {@code Replication.Exchange}: a package-private delegate that hands each
 * request to this node's local {@link Replica} (the cluster id was checked by {@link ClusterCheck}).
 * Answers go back on the same stream, tagged with the request's call id, in completion order.
 *
 * <p>Flow control (docs/architecture.md#limits-of-the-peer-port): a peer that sends requests and
 * does not read the answers must not make this node buffer them without bound. Inbound flow control
 * is manual: a stream takes at most {@code window} requests whose answers have not been handed to
 * gRPC yet, and takes another only when it hands one over, which it does only while the call is
 * ready (its peer reads). Answers that complete while it is not ready wait in the stream's queue
 * for the on-ready signal. A peer that stops reading thus stops being read from, and HTTP/2 flow
 * control holds its further requests on its own side. Besides, the bytes of answers not yet sent
 * (queued, or handed to gRPC since the call was last ready) are held in a node-wide budget; a read
 * whose answer does not fit is answered {@code OVERLOADED} instead (a read has no effect, so that
 * answer is true), and one stream may hold at most half the budget, so that one peer that does not
 * read leaves room for the others. The answer to a write is small and always kept: the write has
 * taken effect.
 *
 * <p>Threading: requests and the on-ready and on-cancel signals arrive on the call's event loop;
 * answers complete on storage threads. Each stream's state, and every call on its response
 * observer (which takes one writer at a time), are guarded by the stream.
 */
final class ReplicationService extends ReplicationGrpc.ReplicationImplBase {

    private static final Logger log = LoggerFactory.getLogger(ReplicationService.class);

    private final Replica local;
    private final int window;
    private final long budgetBytes;
    private final AtomicLong held = new AtomicLong();

    /**
     * @param window      requests one stream takes whose answers are not yet handed to gRPC; at
     *                    least the coordinator's own bound on calls in flight to a peer, so that a
     *                    coordinator that reads its answers is never held back by it
     * @param budgetBytes bytes of answers not yet sent, over all streams (see the class comment)
     */
    ReplicationService(Replica local, int window, long budgetBytes) {
        if (window < 1 || budgetBytes < 1) {
            throw new IllegalArgumentException("replication limits must be positive: " + window + ", " + budgetBytes);
        }
        this.local = local;
        this.window = window;
        this.budgetBytes = budgetBytes;
    }

    /** Bytes of answers not yet sent, over all streams: tests use it to prove that they are bounded. */
    long heldBytes() {
        return held.get();
    }

    @Override
    public StreamObserver<ReplicaRequest> exchange(StreamObserver<ReplicaResponse> responses) {
        return new Exchange((ServerCallStreamObserver<ReplicaResponse>) responses);
    }

    /** One stream. */
    private final class Exchange implements StreamObserver<ReplicaRequest> {
        private final ServerCallStreamObserver<ReplicaResponse> out;
        private final ArrayDeque<ReplicaResponse> queued = new ArrayDeque<>(); // guarded by this
        /** Requests taken whose answers are not handed to gRPC yet. Guarded by this. */
        private int inProgress;
        /** Budget bytes held for {@link #queued}. Guarded by this. */
        private long queuedBytes;
        /** Budget bytes of answers handed to gRPC since the call was last seen ready. Guarded by this. */
        private long sentBytes;
        private boolean draining; // guarded by this: a write that re-enters drain() leaves it to the outer loop
        private boolean halfClosed; // guarded by this
        private boolean completed; // guarded by this
        private boolean over; // guarded by this

        Exchange(ServerCallStreamObserver<ReplicaResponse> out) {
            this.out = out;
            out.disableAutoRequest();
            out.setOnReadyHandler(this::drain);
            out.setOnCancelHandler(this::end);
            out.setOnCloseHandler(this::end);
            out.request(window);
        }

        @Override
        public void onNext(ReplicaRequest request) {
            synchronized (this) {
                inProgress++;
            }
            long callId = request.getHeader().getCallId();
            boolean read = request.hasRead();
            CompletableFuture<ReplicaResponse> answer;
            try {
                answer = handle(request);
            } catch (RuntimeException e) {
                answer = CompletableFuture.failedFuture(e);
            }
            answer.whenComplete((response, error) ->
                    answer(error == null ? response : errorResponse(callId, error), read));
        }

        @Override
        public void onError(Throwable t) {
            // The coordinator went away: the on-cancel handler released what the stream held.
        }

        /** The coordinator sends no more: the stream ends once every answer is handed over. */
        @Override
        public void onCompleted() {
            synchronized (this) {
                halfClosed = true;
            }
            drain();
        }

        private void answer(ReplicaResponse response, boolean read) {
            synchronized (this) {
                if (over) {
                    return;
                }
                long size = response.getSerializedSize();
                if (read && !reserve(size)) {
                    response = error(response.getCallId(), ReplicaError.Code.OVERLOADED,
                            "too many answers are waiting to be sent to this coordinator");
                    size = response.getSerializedSize();
                    held.addAndGet(size);
                } else if (!read) {
                    held.addAndGet(size); // a write took effect: its answer is kept, and it is small
                }
                queuedBytes += size;
                queued.add(response);
            }
            drain();
        }

        /** Takes {@code size} bytes if they fit in the stream's share and in the budget; false (none taken) if not. */
        private boolean reserve(long size) {
            if (queuedBytes + sentBytes + size > budgetBytes / 2) {
                return false;
            }
            if (held.addAndGet(size) > budgetBytes) {
                held.addAndGet(-size);
                return false;
            }
            return true;
        }

        /**
         * Hands queued answers to gRPC while the call is ready, gives their bytes back to the budget
         * once it is ready again after them, asks for as many more requests as it handed over, and
         * ends a stream the coordinator closed once nothing is left to answer.
         */
        private void drain() {
            int handed = 0;
            synchronized (this) {
                if (draining || completed || over) {
                    return;
                }
                draining = true;
                try {
                    while (!queued.isEmpty() && out.isReady()) {
                        ReplicaResponse response = queued.poll();
                        long size = response.getSerializedSize();
                        queuedBytes -= size;
                        sentBytes += size;
                        inProgress--;
                        handed++;
                        out.onNext(response);
                    }
                    if (out.isReady() && sentBytes > 0) {
                        held.addAndGet(-sentBytes); // gRPC holds less than its on-ready threshold of them now
                        sentBytes = 0;
                    }
                    if (halfClosed && inProgress == 0) {
                        completed = true; // what it holds goes back when the call closes
                        out.onCompleted();
                        return;
                    }
                } finally {
                    draining = false;
                }
            }
            if (handed > 0) {
                out.request(handed);
            }
        }

        /** The call ended (cancelled, or closed): what the stream held goes back to the budget. */
        private void end() {
            synchronized (this) {
                if (over) {
                    return;
                }
                over = true;
                held.addAndGet(-(queuedBytes + sentBytes));
                queuedBytes = 0;
                sentBytes = 0;
                queued.clear();
            }
        }
    }

    private CompletableFuture<ReplicaResponse> handle(ReplicaRequest request) {
        RequestHeader header = request.getHeader();
        long callId = header.getCallId();
        try {
            switch (request.getOperationCase()) {
                case READ -> {
                    byte[] key = request.getRead().getKey().toByteArray();
                    if (request.getRead().getDigestOnly()) {
                        return local.readDigest(key).thenApply(digest -> readResponse(callId, digest == null
                                ? ReadResult.newBuilder() : ReadResult.newBuilder()
                                .setDigest(ReplicaProtoUtils.toDigestProto(digest))));
                    }
                    return local.read(key).thenApply(record -> readResponse(callId, record == null
                            ? ReadResult.newBuilder() : ReadResult.newBuilder()
                            .setRecord(ReplicaProtoUtils.toRecordProto(record))));
                }
                case WRITE -> {
                    Record record = ReplicaProtoUtils.toRecord(request.getWrite().getRecord());
                    return local.writeFromPeer(request.getWrite().getKey().toByteArray(), record).thenApply(applied ->
                            ReplicaResponse.newBuilder().setCallId(callId)
                                    .setWrite(WriteResult.newBuilder().setApplied(applied)).build());
                }
                default -> {
                    return CompletableFuture.completedFuture(error(callId, ReplicaError.Code.INTERNAL,
                            "unknown operation " + request.getOperationCase()));
                }
            }
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(error(callId, ReplicaError.Code.INTERNAL,
                    "malformed request: " + e.getMessage()));
        }
    }

    private static ReplicaResponse readResponse(long callId, ReadResult.Builder result) {
        return ReplicaResponse.newBuilder().setCallId(callId).setRead(result).build();
    }

    private static ReplicaResponse errorResponse(long callId, Throwable error) {
        Throwable t = Failures.unwrap(error);
        if (t instanceof OverloadedException) {
            return error(callId, ReplicaError.Code.OVERLOADED, t.getMessage());
        }
        if (t instanceof StorageExpiredException) {
            return error(callId, ReplicaError.Code.DEADLINE_PASSED, t.getMessage());
        }
        if (t instanceof TimestampAheadException) {
            return error(callId, ReplicaError.Code.TIMESTAMP_AHEAD, t.getMessage());
        }
        if (t instanceof RebuildingException) {
            return error(callId, ReplicaError.Code.REBUILDING, t.getMessage());
        }
        if (!(t instanceof StorageFailures.Reported)) {
            log.warn("replica operation failed", t);
        }
        return error(callId, ReplicaError.Code.INTERNAL, String.valueOf(t.getMessage()));
    }

    private static ReplicaResponse error(long callId, ReplicaError.Code code, String message) {
        return ReplicaResponse.newBuilder().setCallId(callId)
                .setError(ReplicaError.newBuilder().setCode(code).setMessage(message)).build();
    }
}
