package io.kvorum.node.transport.grpc;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.coordinator.ReplicaUnavailableException.Reason;
import io.kvorum.node.liveness.PeerProbe;
import io.kvorum.proto.LivenessGrpc;
import io.kvorum.proto.PingRequest;
import io.kvorum.proto.PingResponse;
import io.kvorum.proto.RequestHeader;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link PeerProbe} over {@code Liveness.Ping} on the channel the node keeps to the peer.
 *
 * <p>How each kind meets gRPC's connection handling: a channel whose connection failed stays in
 * {@code TRANSIENT_FAILURE} through its reconnect backoff (which grows to minutes) and fails every
 * call at once meanwhile, even when the peer is back. So {@link Kind#RECONNECT} resets the backoff
 * (an attempt starts now) and waits for the connection ({@code waitForReady}) within the deadline;
 * {@link Kind#HEARTBEAT} and {@link Kind#ANNOUNCE} do not wait, so a connection refused is seen at
 * once. An announcement's deadline is twice the ping timeout, as the peer reaches back before it
 * answers.
 */
final class GrpcPeerProbe implements PeerProbe {

    private final String peerId;
    private final String selfId;
    private final String clusterId;
    private final ManagedChannel channel;
    private final LivenessGrpc.LivenessStub stub;
    private final Duration timeout;

    GrpcPeerProbe(String peerId, String selfId, String clusterId, ManagedChannel channel, Duration timeout) {
        this.peerId = peerId;
        this.selfId = selfId;
        this.clusterId = clusterId;
        this.channel = channel;
        this.stub = LivenessGrpc.newStub(channel);
        this.timeout = timeout;
    }

    @Override
    public String nodeId() {
        return peerId;
    }

    @Override
    public CompletableFuture<Void> ping(Kind kind) {
        long deadlineMillis = kind == Kind.ANNOUNCE ? 2 * timeout.toMillis() : timeout.toMillis();
        LivenessGrpc.LivenessStub call = stub.withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS);
        if (kind == Kind.RECONNECT) {
            if (channel.getState(true) == ConnectivityState.TRANSIENT_FAILURE) {
                channel.resetConnectBackoff();
            }
            call = call.withWaitForReady();
        }
        PingRequest request = PingRequest.newBuilder()
                .setHeader(RequestHeader.newBuilder()
                        .setClusterId(clusterId)
                        .setSender(selfId)
                        .setTimeoutMillis((int) deadlineMillis))
                .setAnnounce(kind == Kind.ANNOUNCE)
                .build();
        CompletableFuture<Void> answered = new CompletableFuture<>();
        call.ping(request, new StreamObserver<>() {
            @Override
            public void onNext(PingResponse response) {
                answered.complete(null);
            }

            @Override
            public void onError(Throwable t) {
                answered.completeExceptionally(failure(Status.fromThrowable(t)));
            }

            @Override
            public void onCompleted() {
                answered.complete(null);
            }
        });
        return answered;
    }

    private ReplicaUnavailableException failure(Status status) {
        Reason reason = switch (status.getCode()) {
            // Waiting for a connection that never came is a failed connection, not a slow peer.
            case DEADLINE_EXCEEDED -> channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE
                    ? Reason.UNREACHABLE : Reason.TIMED_OUT;
            case UNAVAILABLE, PERMISSION_DENIED -> Reason.UNREACHABLE;
            default -> Reason.FAILED;
        };
        return new ReplicaUnavailableException(reason, peerId + " did not answer a ping: " + status.getCode()
                + (status.getDescription() != null ? " (" + status.getDescription() + ")" : ""));
    }
}
