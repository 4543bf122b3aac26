package io.kvorum.node.transport.grpc;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.liveness.PingListener;
import io.kvorum.proto.LivenessGrpc;
import io.kvorum.proto.PingRequest;
import io.kvorum.proto.PingResponse;

/**
 * The receiving side of {@code Liveness.Ping}: a package-private delegate that checks the
 * header's cluster id and hands the ping to the core's {@link PingListener}. A heartbeat is
 * answered at once; an announcement once the listener has reached the sender back.
 */
final class LivenessService extends LivenessGrpc.LivenessImplBase {

    private static final PingResponse PONG = PingResponse.getDefaultInstance();

    private final ForeignClusterLog clusters;
    private final PingListener listener;

    LivenessService(ForeignClusterLog clusters, PingListener listener) {
        this.clusters = clusters;
        this.listener = listener;
    }

    @Override
    public void ping(PingRequest request, StreamObserver<PingResponse> responses) {
        if (!clusters.accepts("heartbeats", request.getHeader())) {
            responses.onError(Status.PERMISSION_DENIED
                    .withDescription("this node belongs to cluster " + clusters.clusterId()).asRuntimeException());
            return;
        }
        String sender = request.getHeader().getSender();
        if (!request.getAnnounce()) {
            listener.pinged(sender);
            answer(responses);
            return;
        }
        listener.announced(sender).whenComplete((ignored, error) -> answer(responses));
    }

    private static void answer(StreamObserver<PingResponse> responses) {
        try {
            responses.onNext(PONG);
            responses.onCompleted();
        } catch (RuntimeException e) {
            // the caller gave up (deadline) or went away: nothing to answer
        }
    }
}
