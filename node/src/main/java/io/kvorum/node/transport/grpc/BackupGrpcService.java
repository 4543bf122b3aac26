package io.kvorum.node.transport.grpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.backup.BackupException;
import io.kvorum.node.backup.BackupPart;
import io.kvorum.node.backup.BackupParticipant;
import io.kvorum.node.cluster.Topology;
import io.kvorum.proto.BackupGrpc;
import io.kvorum.proto.BackupPartsResponse;
import io.kvorum.proto.BackupRequest;
import io.kvorum.proto.BackupResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The receiving side of {@code Backup}: hands each call to the node's {@link BackupParticipant}
 * (the sender was checked by {@link ClusterCheck}) and maps a refusal to its status:
 * {@code ABORTED} (another backup runs here), {@code FAILED_PRECONDITION} (not prepared, or not
 * a valid request), {@code UNAVAILABLE} (this member cannot take part), each with its reason in
 * the {@link #BACKUP_REFUSAL} trailer.
 */
final class BackupGrpcService extends BackupGrpc.BackupImplBase {

    /** More members than any cluster has: a request naming more is not valid. */
    private static final int MOST_MEMBERS = 1024;

    private final BackupParticipant node;

    BackupGrpcService(BackupParticipant node) {
        this.node = node;
    }

    @Override
    public void prepare(BackupRequest request, StreamObserver<BackupResponse> responses) {
        List<String> members = request.getMembersList();
        if (members.size() > MOST_MEMBERS || !members.stream().allMatch(Topology::isNodeId)) {
            answer(CompletableFuture.failedFuture(new BackupException(BackupException.Reason.INVALID,
                    "the members of a backup are not member ids")), responses);
            return;
        }
        answer(node.prepare(request.getId(), members).thenApply(v -> BackupResponse.getDefaultInstance()), responses);
    }

    @Override
    public void start(BackupRequest request, StreamObserver<BackupResponse> responses) {
        answer(node.start(request.getId()).thenApply(v -> BackupResponse.getDefaultInstance()), responses);
    }

    @Override
    public void cancel(BackupRequest request, StreamObserver<BackupResponse> responses) {
        String reason = request.getReason();
        answer(node.cancel(request.getId(), reason.length() > 1000 ? reason.substring(0, 1000) : reason)
                .thenApply(v -> BackupResponse.getDefaultInstance()), responses);
    }

    @Override
    public void parts(BackupRequest request, StreamObserver<BackupPartsResponse> responses) {
        answer(node.parts().thenApply(parts -> {
            BackupPartsResponse.Builder out = BackupPartsResponse.newBuilder();
            for (BackupPart p : parts) {
                out.addPartsBuilder().setId(p.id()).setState(p.state()).setRecords(p.records()).setBytes(p.bytes())
                        .setError(p.error() == null ? "" : p.error()).addAllMembers(p.members());
            }
            return out.build();
        }), responses);
    }

    private static <T> void answer(CompletableFuture<T> result, StreamObserver<T> responses) {
        UnaryCalls.answer(result, responses, BackupGrpcService::statusOf);
    }

    /**
     * The trailer naming the {@link BackupException.Reason} of this member's own refusal, so that the
     * caller tells a member that cannot take part (its disk, its shutdown) from one it cannot reach.
     */
    static final Metadata.Key<String> BACKUP_REFUSAL = Metadata.Key.of("kvorum-backup-refusal", Metadata.ASCII_STRING_MARSHALLER);

    private static RuntimeException statusOf(Throwable error) {
        if (error instanceof BackupException e) {
            Status status = switch (e.reason()) {
                case IN_PROGRESS -> Status.ABORTED;
                case UNAVAILABLE -> Status.UNAVAILABLE;
                case NOT_FOUND -> Status.NOT_FOUND;
                case INVALID -> Status.FAILED_PRECONDITION;
            };
            Metadata trailers = new Metadata();
            trailers.put(BACKUP_REFUSAL, e.reason().name());
            return status.withDescription(e.getMessage()).asRuntimeException(trailers);
        }
        return Status.INTERNAL.withDescription(String.valueOf(error.getMessage())).asRuntimeException();
    }
}
