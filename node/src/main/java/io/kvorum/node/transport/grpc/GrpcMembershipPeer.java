package io.kvorum.node.transport.grpc;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.kvorum.node.util.Failures;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.cluster.MemberState;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChange;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.MembershipChangeException.Reason;
import io.kvorum.node.cluster.MembershipPeer;
import io.kvorum.proto.ChangeRequest;
import io.kvorum.proto.GetMembershipRequest;
import io.kvorum.proto.MembershipGrpc;
import io.kvorum.proto.MembershipProto;
import io.kvorum.proto.ProposeRequest;
import io.kvorum.proto.ProposeResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * {@link MembershipPeer} over {@code Membership} on the channel the node keeps to the peer. Fetches
 * and proposals have {@code timeout}; a change runs while the coordinator proposes it to every
 * member, so it has {@code changeTimeout}. A member's own refusal comes back as it was made (its
 * reason in the {@link MembershipGrpcService#CHANGE_REFUSAL} trailer, its message as the status's
 * description); any other failure of the call means the peer is unavailable, said in its name.
 */
record GrpcMembershipPeer(PeerChannel peer, Duration timeout, Duration changeTimeout) implements MembershipPeer {

    @Override
    public CompletableFuture<Membership> fetch() {
        CompletableFuture<MembershipProto> answer = new CompletableFuture<>();
        detached(() -> stub(timeout).get(GetMembershipRequest.newBuilder().setHeader(peer.header(timeout.toMillis())).build(),
                observer(answer)));
        return answer.thenApply(MembershipProtoUtils::membershipOf);
    }

    @Override
    public CompletableFuture<Void> propose(Membership next) {
        CompletableFuture<ProposeResponse> answer = new CompletableFuture<>();
        detached(() -> stub(timeout).propose(ProposeRequest.newBuilder().setHeader(peer.header(timeout.toMillis()))
                .setMembership(MembershipProtoUtils.toProto(next)).build(), observer(answer)));
        return answer.thenApply(r -> null);
    }

    @Override
    public CompletableFuture<Membership> change(MembershipChange change) {
        CompletableFuture<MembershipProto> answer = new CompletableFuture<>();
        detached(() -> stub(changeTimeout).change(ChangeRequest.newBuilder()
                .setHeader(peer.header(changeTimeout.toMillis()))
                .setKind(MembershipProtoUtils.toProto(change.kind()))
                .setMember(MembershipProtoUtils.toProto(change.member(), MemberState.NORMAL))
                .build(), observer(answer)));
        return answer.thenApply(MembershipProtoUtils::membershipOf);
    }

    /**
     * Runs a call outside the gRPC context of the request being served, if any: a fetch made because
     * a request carried a newer epoch, or a proposal made while serving a change, must outlive it.
     */
    private static void detached(Runnable call) {
        Context.ROOT.run(call);
    }

    private MembershipGrpc.MembershipStub stub(Duration deadline) {
        return MembershipGrpc.newStub(peer.channel()).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
    }

    private <T> StreamObserver<T> observer(CompletableFuture<T> answer) {
        return UnaryCalls.completing(answer, this::failure);
    }

    /** The member's own refusal when the status carries one, else the call's failure. */
    private MembershipChangeException failure(Throwable t) {
        Status status = Status.fromThrowable(t);
        Metadata trailers = Status.trailersFromThrowable(t);
        String refusal = trailers == null ? null : trailers.get(MembershipGrpcService.CHANGE_REFUSAL);
        for (Reason reason : Reason.values()) { // a reason this build does not know is a failure
            if (reason.name().equals(refusal)) {
                return new MembershipChangeException(reason, status.getDescription());
            }
        }
        return failure(status, t);
    }

    /** @param cause what the call failed with, for a TLS reason that the status does not carry; null if none */
    private MembershipChangeException failure(Status status, Throwable cause) {
        Function<String, String> said = what -> peer.peerId() + " " + what
                + (status.getDescription() != null ? ": " + status.getDescription().lines().findFirst().orElse("") : "")
                + Failures.tlsReason(cause); // grpc-netty's description of an I/O failure goes on to list the channel's handlers
        return switch (status.getCode()) {
            case UNAVAILABLE, DEADLINE_EXCEEDED, PERMISSION_DENIED -> new MembershipChangeException(Reason.UNAVAILABLE,
                    said.apply("is unreachable (" + status.getCode() + ")"));
            default -> new MembershipChangeException(Reason.UNAVAILABLE, said.apply("failed (" + status.getCode() + ")"));
        };
    }
}
