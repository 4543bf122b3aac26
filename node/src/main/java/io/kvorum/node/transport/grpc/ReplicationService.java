package io.kvorum.node.transport.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.StorageExpiredException;
import io.kvorum.node.storage.StorageFailures;
import io.kvorum.node.util.Failures;
import io.kvorum.proto.ReadResult;
import io.kvorum.proto.ReplicaError;
import io.kvorum.proto.ReplicaRequest;
import io.kvorum.proto.ReplicaResponse;
import io.kvorum.proto.ReplicationGrpc;
import io.kvorum.proto.RequestHeader;
import io.kvorum.proto.WriteResult;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replica side of {@code Replication.Exchange}: a package-private delegate that hands each
 * request to this node's local {@link Replica} (the cluster id was checked by {@link ClusterCheck}).
 * Answers go back on the same stream, tagged with the request's call id, in completion order.
 */
final class ReplicationService extends ReplicationGrpc.ReplicationImplBase {

    private static final Logger log = LoggerFactory.getLogger(ReplicationService.class);

    private final Replica local;

    ReplicationService(Replica local) {
        this.local = local;
    }

    @Override
    public StreamObserver<ReplicaRequest> exchange(StreamObserver<ReplicaResponse> responses) {
        ServerCallStreamObserver<ReplicaResponse> out = (ServerCallStreamObserver<ReplicaResponse>) responses;
        return new StreamObserver<>() {
            @Override
            public void onNext(ReplicaRequest request) {
                handle(request).whenComplete((response, error) -> {
                    ReplicaResponse answer = error == null ? response
                            : errorResponse(request.getHeader().getCallId(), error);
                    // Answers complete on storage threads; a stream observer takes one writer at a time.
                    synchronized (out) {
                        if (!out.isCancelled()) {
                            out.onNext(answer);
                        }
                    }
                });
            }

            @Override
            public void onError(Throwable t) {
                // The coordinator went away; answers still in flight are dropped by isCancelled().
            }

            @Override
            public void onCompleted() {
                synchronized (out) {
                    out.onCompleted();
                }
            }
        };
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
                    return local.write(request.getWrite().getKey().toByteArray(), record).thenApply(applied ->
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
