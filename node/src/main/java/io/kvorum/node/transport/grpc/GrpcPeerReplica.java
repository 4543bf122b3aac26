package io.kvorum.node.transport.grpc;

import io.grpc.ConnectivityState;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.coordinator.ReplicaUnavailableException.Reason;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.rebuild.RebuildingException;
import io.kvorum.node.storage.StorageOverloadedException;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.time.TimestampAheadException;
import io.kvorum.proto.ReadRequest;
import io.kvorum.proto.ReadResult;
import io.kvorum.proto.ReplicaError;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import io.kvorum.proto.WriteRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A remote replica reached over one long-lived {@code Replication.Exchange} stream that
 * multiplexes every request to that peer by call id.
 *
 * <p>Deadlines: a stream deadline would cover the whole stream, so each message gets its own
 * timer (keyed by call id) that fails the call with {@link ReplicaUnavailableException} after the
 * request timeout. A write is then still awaited for one more timeout, and a late answer to it is
 * reported through the exception ({@link ReplicaUnavailableException#timedOut}). Peer down:
 * deciding that is liveness's job ({@code GuardedReplica} fails calls to a peer known to be down
 * before they reach this class, and its heartbeats reconnect to a peer that comes back). Here, a
 * call fails at once, with reason {@code UNREACHABLE}, when the channel's last connection attempt
 * failed ({@code TRANSIENT_FAILURE}), which tells liveness the peer is down;
 * otherwise it is sent, and a channel that is connecting holds it until connected or failed. A
 * broken stream fails its calls ({@code UNREACHABLE} when the connection failed) and is reopened by
 * the next one; {@link #abandonStream} drops the stream of a peer found down.
 * Calls in flight are bounded by a semaphore; beyond it a call fails with
 * {@link StorageOverloadedException}, so memory stays bounded when a peer is slow.
 *
 * <p>Thread-safe. Futures complete on gRPC or timer threads.
 */
public final class GrpcPeerReplica implements Replica, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GrpcPeerReplica.class);

    private final PeerChannel peer;
    private final ReplicationGrpc.ReplicationStub stub;
    private final RequestTimer timer;
    private final long timeoutNanos;
    private final Semaphore inFlight;
    private final Semaphore inFlightKiB;
    private final AtomicLong callIds = new AtomicLong();
    private final Object streamLock = new Object();
    private Session session; // guarded by streamLock

    /**
     * @param maxInFlight      calls to this peer that may await an answer at once
     * @param maxInFlightBytes bytes of requests to this peer that may await an answer at once; with
     *                         the call bound, this caps what gRPC buffers when the peer is slow
     */
    public GrpcPeerReplica(PeerChannel peer, RequestTimer timer, Duration requestTimeout, int maxInFlight,
                           long maxInFlightBytes) {
        this.peer = peer;
        this.stub = ReplicationGrpc.newStub(peer.channel());
        this.timer = timer;
        this.timeoutNanos = requestTimeout.toNanos();
        this.inFlight = new Semaphore(maxInFlight);
        this.inFlightKiB = new Semaphore((int) Math.min(Integer.MAX_VALUE, maxInFlightBytes >> 10));
    }

    @Override
    public String nodeId() {
        return peer.peerId();
    }

    @Override
    public CompletableFuture<Record> read(byte[] key) {
        return read(key, false, result ->
                result.hasRecord() ? ReplicaProtoUtils.toRecord(result.getRecord()) : null);
    }

    /** A peer that predates digest reads answers with the record: its digest is computed here then. */
    @Override
    public CompletableFuture<RecordDigest> readDigest(byte[] key) {
        return read(key, true, result -> {
            if (result.hasDigest()) {
                return ReplicaProtoUtils.toDigest(result.getDigest());
            }
            return result.hasRecord() ? RecordDigest.of(ReplicaProtoUtils.toRecord(result.getRecord())) : null;
        });
    }

    private <T> CompletableFuture<T> read(byte[] key, boolean digestOnly, Function<ReadResult, T> decode) {
        ReplicaRequest.Builder request = ReplicaRequest.newBuilder()
                .setRead(ReadRequest.newBuilder().setKey(ReplicaProtoUtils.bytes(key)).setDigestOnly(digestOnly));
        return call(request, false, response -> {
            if (!response.hasRead()) {
                throw new ReplicaUnavailableException(
                        peer.peerId() + " answered a read with " + response.getResultCase());
            }
            return decode.apply(response.getRead());
        });
    }

    @Override
    public CompletableFuture<Boolean> write(byte[] key, Record record) {
        ReplicaRequest.Builder request = ReplicaRequest.newBuilder().setWrite(WriteRequest.newBuilder()
                .setKey(ReplicaProtoUtils.bytes(key)).setRecord(ReplicaProtoUtils.toRecordProto(record)));
        return call(request, true, response -> {
            if (!response.hasWrite()) {
                throw new ReplicaUnavailableException(
                        peer.peerId() + " answered a write with " + response.getResultCase());
            }
            return response.getWrite().getApplied();
        });
    }

    /**
     * @param awaitLate whether a call that timed out stays awaited for one more request timeout (see
     *                  {@link ReplicaUnavailableException#timedOut}): for writes, whose late success
     *                  spares a hint; its permits stay taken meanwhile, as its message is still in flight
     */
    private <T> CompletableFuture<T> call(ReplicaRequest.Builder request, boolean awaitLate,
                                          Function<ReplicaResponse, T> decode) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (peer.channel().getState(true) == ConnectivityState.TRANSIENT_FAILURE) {
            result.completeExceptionally(
                    new ReplicaUnavailableException(Reason.UNREACHABLE, peer.peerId() + " is unreachable"));
            return result;
        }
        if (!inFlight.tryAcquire()) {
            result.completeExceptionally(new OverloadedException("too many requests in flight to " + peer.peerId()));
            return result;
        }
        long callId = callIds.incrementAndGet();
        PendingCall pending = new PendingCall();
        ReplicaRequest message = request
                .setHeader(peer.header(TimeUnit.NANOSECONDS.toMillis(timeoutNanos)).setCallId(callId))
                .build();
        int kib = (message.getSerializedSize() >> 10) + 1;
        if (!inFlightKiB.tryAcquire(kib)) {
            inFlight.release();
            result.completeExceptionally(new OverloadedException("too many bytes in flight to " + peer.peerId()));
            return result;
        }
        pending.answer.whenComplete((response, error) -> {
            inFlight.release();
            inFlightKiB.release(kib);
            if (error != null) {
                result.completeExceptionally(error);
                return;
            }
            try {
                result.complete(decode.apply(response));
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        Session s;
        synchronized (streamLock) {
            if (session == null || session.broken) {
                session = new Session();
                stub.exchange(session);
            }
            s = session;
            s.pending.put(callId, pending);
            try {
                s.requests.onNext(message);
            } catch (RuntimeException e) {
                s.pending.remove(callId);
                pending.fail(new ReplicaUnavailableException(Reason.UNREACHABLE,
                        "sending to " + peer.peerId() + " failed: " + e.getMessage()));
                return result;
            }
            // The stream may have failed before this call joined it: with the channel's direct executor
            // it can even fail inside stub.exchange() above, when the peer has just become unreachable.
            // failAll() has then run already and never saw this call, and a message sent on a closed
            // stream is dropped silently, so fail the call here rather than at its timeout.
            if (s.broken && s.pending.remove(callId) != null) {
                pending.fail(new ReplicaUnavailableException(s.failure, "stream to " + peer.peerId() + " failed"));
                return result;
            }
        }
        pending.timeout = timer.schedule(() -> {
            if (!awaitLate) {
                if (s.pending.remove(callId) != null) {
                    pending.fail(new ReplicaUnavailableException(Reason.TIMED_OUT,
                            peer.peerId() + " did not answer within the request timeout"));
                }
                return;
            }
            if (!s.pending.containsKey(callId)) {
                return;
            }
            CompletableFuture<Void> lateAnswer = pending.answer.thenAccept(decode::apply);
            result.completeExceptionally(ReplicaUnavailableException.timedOut(
                    peer.peerId() + " did not answer within the request timeout", lateAnswer));
            pending.timeout = timer.schedule(() -> {
                if (s.pending.remove(callId) != null) {
                    pending.fail(new ReplicaUnavailableException(Reason.TIMED_OUT,
                            peer.peerId() + " did not answer within twice the request timeout"));
                }
            }, timeoutNanos, TimeUnit.NANOSECONDS);
        }, timeoutNanos, TimeUnit.NANOSECONDS);
        if (pending.answer.isDone()) {
            pending.timeout.cancel(); // answered before the timer was set
        }
        return result;
    }

    /**
     * Cancels the current stream, failing the calls on it at once: for a peer found down, whose
     * stream may be waiting for a connection with messages buffered. The next call opens a new one.
     */
    public void abandonStream() {
        Session s;
        synchronized (streamLock) {
            s = session;
            session = null;
        }
        if (s != null) {
            s.abandon(Reason.UNREACHABLE, "the stream to " + peer.peerId() + " was abandoned: the peer is down");
        }
    }

    /**
     * Closes the channel and fails every call still waiting for an answer before it returns, so
     * that what a caller does on failure (a write's hint) happens before the caller moves on to
     * close what it needs for that (the hint store).
     */
    @Override
    public void close() {
        peer.channel().shutdownNow();
        Session s;
        synchronized (streamLock) {
            s = session;
        }
        if (s != null) {
            s.abandon(Reason.UNREACHABLE, "the node is shutting down");
        }
    }

    /** One call awaiting its answer. */
    private static final class PendingCall {
        final CompletableFuture<ReplicaResponse> answer = new CompletableFuture<>();
        volatile RequestTimer.Timeout timeout;

        void complete(ReplicaResponse response) {
            cancelTimer();
            answer.complete(response);
        }

        void fail(Throwable t) {
            cancelTimer();
            answer.completeExceptionally(t);
        }

        private void cancelTimer() {
            RequestTimer.Timeout t = timeout;
            if (t != null) {
                t.cancel();
            }
        }
    }

    /** One Exchange stream and the calls sent on it. */
    private final class Session implements ClientResponseObserver<ReplicaRequest, ReplicaResponse> {
        final Map<Long, PendingCall> pending = new ConcurrentHashMap<>();
        ClientCallStreamObserver<ReplicaRequest> requests;
        volatile boolean broken;
        volatile Reason failure = Reason.UNREACHABLE;

        @Override
        public void beforeStart(ClientCallStreamObserver<ReplicaRequest> requestStream) {
            this.requests = requestStream;
        }

        @Override
        public void onNext(ReplicaResponse response) {
            PendingCall call = pending.remove(response.getCallId());
            if (call == null) {
                return; // timed out already
            }
            if (response.hasError()) {
                call.fail(toException(response.getError()));
            } else {
                call.complete(response);
            }
        }

        @Override
        public void onError(Throwable t) {
            if (!broken) { // else abandoned by us, with its reason
                failure = switch (Status.fromThrowable(t).getCode()) {
                    case UNAVAILABLE -> Reason.UNREACHABLE;
                    case DEADLINE_EXCEEDED -> Reason.TIMED_OUT;
                    default -> Reason.FAILED;
                };
                broken = true;
            }
            log.debug("replication stream to {} failed: {}", peer.peerId(), t.toString());
            failAll("stream to " + peer.peerId() + " failed: " + t.getMessage());
        }

        @Override
        public void onCompleted() {
            broken = true;
            failAll("stream to " + peer.peerId() + " closed");
        }

        /** Ends this stream from our side: cancelled, with every call on it failed. */
        void abandon(Reason reason, String why) {
            failure = reason;
            broken = true;
            ClientCallStreamObserver<ReplicaRequest> r = requests;
            if (r != null) {
                try {
                    r.cancel(why, null);
                } catch (RuntimeException e) {
                    log.debug("cancelling the stream to {} failed: {}", peer.peerId(), e.toString());
                }
            }
            failAll(why);
        }

        private void failAll(String why) {
            for (Long id : pending.keySet()) {
                PendingCall call = pending.remove(id);
                if (call != null) {
                    call.fail(new ReplicaUnavailableException(failure, why));
                }
            }
        }
    }

    private RuntimeException toException(ReplicaError error) {
        return switch (error.getCode()) {
            case OVERLOADED -> new OverloadedException(peer.peerId() + " is overloaded: " + error.getMessage());
            case WRONG_CLUSTER -> new ReplicaUnavailableException(peer.peerId() + " refused us: " + error.getMessage());
            case DEADLINE_PASSED ->
                    new ReplicaUnavailableException(Reason.TIMED_OUT, peer.peerId() + " dropped an expired request");
            case TIMESTAMP_AHEAD -> new TimestampAheadException(error.getMessage());
            case REBUILDING -> new RebuildingException(error.getMessage());
            case INTERNAL, CODE_UNSPECIFIED, UNRECOGNIZED ->
                    new ReplicaUnavailableException(peer.peerId() + " failed: " + error.getMessage());
        };
    }
}
