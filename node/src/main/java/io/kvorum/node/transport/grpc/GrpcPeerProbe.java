package io.kvorum.node.transport.grpc;

import io.grpc.ConnectivityState;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.coordinator.ReplicaUnavailableException.Reason;
import io.kvorum.node.liveness.PeerProbe;
import io.kvorum.proto.LivenessGrpc;
import io.kvorum.proto.PingRequest;
import io.kvorum.proto.PingResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link PeerProbe} over {@code Liveness.Ping}. Heartbeats go over {@code heartbeats}, a channel
 * of their own (why: {@code GrpcTransport#heartbeatChannel}); reconnections and announcements go
 * over {@code peer}, the channel the data traffic uses, since what they establish is that this
 * channel is connected and requests can flow.
 *
 * <p>How each kind meets gRPC's connection handling: a channel whose connection failed stays in
 * {@code TRANSIENT_FAILURE} through its reconnect backoff (which grows to minutes) and fails every
 * call at once meanwhile, even when the peer is back. So {@link Kind#RECONNECT} resets the backoff
 * of both channels (an attempt starts now) and waits for the data connection ({@code waitForReady})
 * within the deadline; {@link Kind#HEARTBEAT} and {@link Kind#ANNOUNCE} do not wait, so a
 * connection refused is seen at once, except that a heartbeat whose channel is still in backoff
 * while the peer is up (its data connection answered) reconnects it and waits. An announcement's
 * deadline is twice the ping timeout, as the peer reaches back before it answers.
 */
record GrpcPeerProbe(PeerChannel peer, PeerChannel heartbeats, Duration timeout) implements PeerProbe {

    @Override
    public String nodeId() {
        return peer.peerId();
    }

    @Override
    public CompletableFuture<Pong> ping(Kind kind, String incarnation) {
        long deadlineMillis = kind == Kind.ANNOUNCE ? 2 * timeout.toMillis() : timeout.toMillis();
        PeerChannel via = kind == Kind.HEARTBEAT ? heartbeats : peer;
        LivenessGrpc.LivenessStub call = LivenessGrpc.newStub(via.channel())
                .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS);
        if (kind == Kind.RECONNECT) {
            peer.connectNow();
            heartbeats.connectNow();
            call = call.withWaitForReady();
        } else if (kind == Kind.HEARTBEAT && via.channel().getState(true) == ConnectivityState.TRANSIENT_FAILURE) {
            via.connectNow();
            call = call.withWaitForReady();
        }
        PingRequest request = PingRequest.newBuilder()
                .setHeader(peer.header(deadlineMillis))
                .setAnnounce(kind == Kind.ANNOUNCE)
                .setIncarnation(incarnation)
                .build();
        CompletableFuture<Pong> answered = new CompletableFuture<>();
        call.ping(request, new StreamObserver<>() {
            @Override
            public void onNext(PingResponse response) {
                answered.complete(new Pong(response.getWallMillis(), response.getRememberedIncarnation()));
            }

            @Override
            public void onError(Throwable t) {
                answered.completeExceptionally(failure(via, Status.fromThrowable(t)));
            }

            @Override
            public void onCompleted() {
                answered.complete(new Pong(0, "")); // no answer message: nothing measured
            }
        });
        return answered;
    }

    private ReplicaUnavailableException failure(PeerChannel via, Status status) {
        Reason reason = switch (status.getCode()) {
            // Waiting for a connection that never came is a failed connection, not a slow peer.
            case DEADLINE_EXCEEDED -> via.channel().getState(false) == ConnectivityState.TRANSIENT_FAILURE
                    ? Reason.UNREACHABLE : Reason.TIMED_OUT;
            case UNAVAILABLE, PERMISSION_DENIED -> Reason.UNREACHABLE;
            default -> Reason.FAILED;
        };
        return new ReplicaUnavailableException(reason, peer.peerId() + " did not answer a ping: " + status.getCode()
                + (status.getDescription() != null ? " (" + status.getDescription() + ")" : ""));
    }
}
