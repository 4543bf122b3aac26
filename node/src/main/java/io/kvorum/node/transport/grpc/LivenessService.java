package io.kvorum.node.transport.grpc;

import io.grpc.stub.StreamObserver;
import io.kvorum.node.liveness.PingListener;
import io.kvorum.proto.LivenessGrpc;
import io.kvorum.proto.PingRequest;
import io.kvorum.proto.PingResponse;

/**
 * The receiving side of {@code Liveness.Ping}: a package-private delegate that hands the ping to
 * the core's {@link PingListener} (the cluster id was checked by {@link ClusterCheck}). A heartbeat is
 * answered at once; an announcement once the listener has reached the sender back. Every answer
 * carries this node's wall clock as it is sent, and the incarnation it remembered for the sender's
 * store before the one the ping names.
 */
final class LivenessService extends LivenessGrpc.LivenessImplBase {

    private final PingListener listener;

    LivenessService(PingListener listener) {
        this.listener = listener;
    }

    @Override
    public void ping(PingRequest request, StreamObserver<PingResponse> responses) {
        String sender = request.getHeader().getSender();
        String remembered = listener.incarnationSeen(sender, request.getIncarnation());
        if (!request.getAnnounce()) {
            listener.pinged(sender);
            answer(responses, remembered);
            return;
        }
        listener.announced(sender).whenComplete((ignored, error) -> answer(responses, remembered));
    }

    private void answer(StreamObserver<PingResponse> responses, String remembered) {
        try {
            responses.onNext(PingResponse.newBuilder().setWallMillis(listener.wallClockMillis())
                    .setRememberedIncarnation(remembered).build());
            responses.onCompleted();
        } catch (RuntimeException e) {
            // the caller gave up (deadline) or went away: nothing to answer
        }
    }
}
