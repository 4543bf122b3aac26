package io.kvorum.node.transport.grpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.MembershipResponder;
import io.kvorum.proto.ChangeRequest;
import io.kvorum.proto.GetMembershipRequest;
import io.kvorum.proto.MembershipGrpc;
import io.kvorum.proto.MembershipProto;
import io.kvorum.proto.ProposeRequest;
import io.kvorum.proto.ProposeResponse;
import java.util.concurrent.CompletableFuture;

/**
 * The receiving side of {@code Membership}: hands each call to the node's
 * {@link MembershipResponder} (the cluster was checked by {@link ClusterCheck}) and maps a refused
 * change to its status: {@code ABORTED} (in progress), {@code UNAVAILABLE} (a member unreachable),
 * {@code FAILED_PRECONDITION} (not possible).
 */
final class MembershipGrpcService extends MembershipGrpc.MembershipImplBase {

    private final MembershipResponder node;

    MembershipGrpcService(MembershipResponder node) {
        this.node = node;
    }

    @Override
    public void get(GetMembershipRequest request, StreamObserver<MembershipProto> responses) {
        answer(CompletableFuture.completedFuture(MembershipProtoUtils.toProto(node.membership())), responses);
    }

    @Override
    public void propose(ProposeRequest request, StreamObserver<ProposeResponse> responses) {
        CompletableFuture<ProposeResponse> done;
        try {
            done = node.adoptProposal(request.getHeader().getSender(), MembershipProtoUtils.membershipOf(request.getMembership()))
                    .thenApply(v -> ProposeResponse.getDefaultInstance());
        } catch (IllegalArgumentException e) {
            done = CompletableFuture.failedFuture(
                    new MembershipChangeException(MembershipChangeException.Reason.INVALID, e.getMessage()));
        }
        answer(done, responses);
    }

    @Override
    public void change(ChangeRequest request, StreamObserver<MembershipProto> responses) {
        CompletableFuture<MembershipProto> done;
        try {
            done = node.changeFrom(request.getHeader().getSender(), MembershipProtoUtils.changeOf(request))
                    .thenApply(MembershipProtoUtils::toProto);
        } catch (IllegalArgumentException e) {
            done = CompletableFuture.failedFuture(
                    new MembershipChangeException(MembershipChangeException.Reason.INVALID, e.getMessage()));
        }
        answer(done, responses);
    }

    private static <T> void answer(CompletableFuture<T> result, StreamObserver<T> responses) {
        UnaryCalls.answer(result, responses, MembershipGrpcService::statusOf);
    }

    /**
     * Set on a status that carries a member's own refusal (a {@link MembershipChangeException}, by
     * its reason's name), so that the caller tells it from a failure of the call itself.
     */
    static final Metadata.Key<String> CHANGE_REFUSAL = Metadata.Key.of("kvorum-change-refusal", Metadata.ASCII_STRING_MARSHALLER);

    static StatusRuntimeException statusOf(Throwable error) {
        if (error instanceof MembershipChangeException e) {
            Status status = switch (e.reason()) {
                case IN_PROGRESS -> Status.ABORTED;
                case UNAVAILABLE -> Status.UNAVAILABLE;
                case INVALID -> Status.FAILED_PRECONDITION;
            };
            Metadata trailers = new Metadata();
            trailers.put(CHANGE_REFUSAL, e.reason().name());
            return status.withDescription(e.getMessage()).asRuntimeException(trailers);
        }
        return Status.INTERNAL.withDescription(String.valueOf(error.getMessage())).asRuntimeException();
    }
}
