package io.kvorum.node.transport.grpc;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.antientropy.AntiEntropyMessage;
import io.kvorum.node.antientropy.AntiEntropyMessage.Open;
import io.kvorum.node.antientropy.AntiEntropyResponder;
import io.kvorum.node.antientropy.AntiEntropyResponders;
import io.kvorum.node.antientropy.AntiEntropyStream;
import io.kvorum.node.antientropy.RepairException;
import io.kvorum.node.antientropy.RepairException.Reason;
import io.kvorum.proto.AntiEntropyGrpc;
import io.kvorum.proto.RequestHeader;
import io.kvorum.proto.SyncRequest;
import io.kvorum.proto.SyncResponse;

/**
 * The responder side of {@code AntiEntropy.Sync}: a package-private delegate that checks the
 * first message's header and open step, then binds the stream to an {@link AntiEntropyResponder}
 * from the node's {@link AntiEntropyResponders}. Flow control is manual both ways: a message is
 * requested only when the responder asks, and the responder is told when the stream is ready.
 */
final class AntiEntropyGrpcService extends AntiEntropyGrpc.AntiEntropyImplBase {

    private final AntiEntropyResponders antiEntropy;

    AntiEntropyGrpcService(AntiEntropyResponders antiEntropy) {
        this.antiEntropy = antiEntropy;
    }

    @Override
    public StreamObserver<SyncRequest> sync(StreamObserver<SyncResponse> responses) {
        return new ServedRound((ServerCallStreamObserver<SyncResponse>) responses);
    }

    /** One served round: the inbound observer and, for the responder, the outbound stream. */
    private final class ServedRound implements StreamObserver<SyncRequest>, AntiEntropyStream {
        private final ServerCallStreamObserver<SyncResponse> out;
        private volatile AntiEntropyResponder responder;
        private volatile boolean ended;

        /** Takes over flow control of the stream; gRPC allows that only before the observer is returned. */
        ServedRound(ServerCallStreamObserver<SyncResponse> out) {
            this.out = out;
            out.disableAutoRequest();
            out.setOnReadyHandler(this::onReady);
            out.setOnCancelHandler(this::onCancel);
            out.request(1);
        }

        @Override
        public void onNext(SyncRequest request) {
            AntiEntropyResponder r = responder;
            if (r == null) {
                open(request);
                return;
            }
            r.countBytesReceived(request.getSerializedSize());
            AntiEntropyMessage message;
            try {
                message = AntiEntropyProtoUtils.fromRequest(request);
            } catch (IllegalArgumentException e) {
                RepairException error = new RepairException(Reason.PROTOCOL, "malformed message: " + e.getMessage());
                abort(error);
                r.onPeerFailed(error);
                return;
            }
            r.onMessage(message);
        }

        private void open(SyncRequest request) {
            RequestHeader header = request.getHeader();
            if (!request.hasOpen()) {
                abort(new RepairException(Reason.PROTOCOL, "a round must begin with open, not " + request.getStepCase()));
                return;
            }
            AntiEntropyResponder r;
            try {
                r = antiEntropy.openResponder(header.getSender(), (Open) AntiEntropyProtoUtils.fromRequest(request));
            } catch (RepairException e) {
                abort(e);
                return;
            }
            r.countBytesReceived(request.getSerializedSize());
            responder = r;
            r.start(this);
        }

        @Override
        public void onError(Throwable t) {
            AntiEntropyResponder r = responder;
            if (r != null) {
                r.onPeerFailed(AntiEntropyProtoUtils.toRepairException(r.peerId(), t));
            }
        }

        @Override
        public void onCompleted() {
            AntiEntropyResponder r = responder;
            if (r != null) {
                r.onPeerClosed();
            } else {
                complete();
            }
        }

        void onReady() {
            AntiEntropyResponder r = responder;
            if (r != null) {
                r.onReady();
            }
        }

        void onCancel() {
            ended = true;
            AntiEntropyResponder r = responder;
            if (r != null) {
                r.onPeerFailed(new RepairException(Reason.UNREACHABLE, r.peerId() + " cancelled the round"));
            }
        }

        @Override
        public boolean isReady() {
            return out.isReady();
        }

        @Override
        public void send(AntiEntropyMessage message) {
            if (ended || out.isCancelled()) {
                return;
            }
            SyncResponse response = AntiEntropyProtoUtils.toResponse(message);
            responder.countBytesSent(response.getSerializedSize());
            out.onNext(response);
        }

        @Override
        public void request(int count) {
            if (!ended) {
                out.request(count);
            }
        }

        @Override
        public void complete() {
            if (!ended && !out.isCancelled()) {
                ended = true;
                out.onCompleted();
            }
        }

        @Override
        public void abort(RepairException error) {
            if (!ended && !out.isCancelled()) {
                ended = true;
                Status status = AntiEntropyProtoUtils.toStatus(error);
                out.onError(status.asRuntimeException());
            }
        }
    }
}
