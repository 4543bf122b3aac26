package io.kvorum.node.transport.grpc;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.backup.BackupException;
import io.kvorum.node.backup.BackupPart;
import io.kvorum.node.backup.BackupParticipant;
import io.kvorum.node.util.Failures;
import io.kvorum.proto.BackupGrpc;
import io.kvorum.proto.BackupPartsResponse;
import io.kvorum.proto.BackupRequest;
import io.kvorum.proto.BackupResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link BackupParticipant} over {@code Backup} on the channel the node keeps to the peer; every
 * call has {@code timeout}. A member's own refusal (its reason in the
 * {@link BackupGrpcService#BACKUP_REFUSAL} trailer: another backup runs there, not prepared, it
 * cannot take part) comes back as the {@link BackupException} it made, with its message; any other
 * failure means the peer was not reached.
 */
record GrpcBackupPeer(PeerChannel peer, Duration timeout) implements BackupParticipant {

    @Override
    public CompletableFuture<Void> prepare(String id, List<String> members) {
        return call(request(id).addAllMembers(members).build(), BackupGrpc.BackupStub::prepare).thenApply(r -> null);
    }

    @Override
    public CompletableFuture<Void> start(String id) {
        return call(request(id).build(), BackupGrpc.BackupStub::start).thenApply(r -> null);
    }

    @Override
    public CompletableFuture<Void> cancel(String id, String reason) {
        return call(request(id).setReason(reason).build(), BackupGrpc.BackupStub::cancel).thenApply(r -> null);
    }

    @Override
    public CompletableFuture<List<BackupPart>> parts() {
        CompletableFuture<BackupPartsResponse> answer = new CompletableFuture<>();
        Context.ROOT.run(() -> stub().parts(request("").build(), observer(answer)));
        return answer.thenApply(r -> r.getPartsList().stream()
                .map(p -> new BackupPart(p.getId(), p.getState(), p.getRecords(), p.getBytes(),
                        p.getError().isEmpty() ? null : p.getError(), p.getMembersList()))
                .toList());
    }

    private interface Call {
        void send(BackupGrpc.BackupStub stub, BackupRequest request, StreamObserver<BackupResponse> responses);
    }

    private CompletableFuture<BackupResponse> call(BackupRequest request, Call call) {
        CompletableFuture<BackupResponse> answer = new CompletableFuture<>();
        // Outside the gRPC context of a request being served: a backup outlives the call that started it.
        Context.ROOT.run(() -> call.send(stub(), request, observer(answer)));
        return answer;
    }

    private BackupRequest.Builder request(String id) {
        return BackupRequest.newBuilder().setHeader(peer.header(timeout.toMillis())).setId(id);
    }

    private BackupGrpc.BackupStub stub() {
        return BackupGrpc.newStub(peer.channel()).withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private <T> StreamObserver<T> observer(CompletableFuture<T> answer) {
        return UnaryCalls.completing(answer, this::failure);
    }

    private RuntimeException failure(Throwable t) {
        Status status = Status.fromThrowable(t);
        String said = status.getDescription() == null ? "" : status.getDescription().lines().findFirst().orElse("");
        Metadata trailers = Status.trailersFromThrowable(t);
        String refusal = trailers == null ? null : trailers.get(BackupGrpcService.BACKUP_REFUSAL);
        for (BackupException.Reason reason : BackupException.Reason.values()) { // one this build does not know is a failure
            if (reason.name().equals(refusal)) {
                return new BackupException(reason, said);
            }
        }
        return switch (status.getCode()) {
            case ABORTED -> new BackupException(BackupException.Reason.IN_PROGRESS, said);
            case FAILED_PRECONDITION -> new BackupException(BackupException.Reason.INVALID, said);
            default -> new IllegalStateException(peer.peerId() + " is unreachable (" + status.getCode()
                    + (said.isEmpty() ? "" : ": " + said) + ")" + Failures.tlsReason(t));
        };
    }
}
