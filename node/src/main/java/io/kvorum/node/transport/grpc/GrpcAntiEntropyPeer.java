package io.kvorum.node.transport.grpc;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kvorum.node.antientropy.AntiEntropyInitiator;
import io.kvorum.node.antientropy.AntiEntropyMessage;
import io.kvorum.node.antientropy.AntiEntropyPeer;
import io.kvorum.node.antientropy.AntiEntropyStream;
import io.kvorum.node.antientropy.RepairException;
import io.kvorum.node.antientropy.RepairException.Reason;
import io.kvorum.proto.AntiEntropyGrpc;
import io.kvorum.proto.RequestHeader;
import io.kvorum.proto.SyncRequest;
import io.kvorum.proto.SyncResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The initiator's transport to one peer: each round is one {@code AntiEntropy.Sync} call on the
 * channel the node already keeps to that peer. The call has a deadline ({@code roundDeadline}),
 * which covers the whole round; the session adds an idle timeout per wait. The first message
 * carries the header that the peer checks. Flow control is manual both ways.
 *
 * <p>Thread-safe: each call has its own observer; the session drives the request side from its
 * serial executor only.
 */
public final class GrpcAntiEntropyPeer implements AntiEntropyPeer {

    private final PeerChannel peer;
    private final AntiEntropyGrpc.AntiEntropyStub stub;
    private final Duration roundDeadline;
    private final AtomicLong callIds = new AtomicLong();

    public GrpcAntiEntropyPeer(PeerChannel peer, Duration roundDeadline) {
        this.peer = peer;
        this.stub = AntiEntropyGrpc.newStub(peer.channel());
        this.roundDeadline = roundDeadline;
    }

    @Override
    public String nodeId() {
        return peer.peerId();
    }

    @Override
    public void open(AntiEntropyInitiator round) {
        peer.connectNow(); // a peer that just came back is tried now, not after the backoff
        RequestHeader header = peer.header(roundDeadline.toMillis())
                .setCallId(callIds.incrementAndGet())
                .build();
        Call call = new Call(round, header);
        try {
            stub.withDeadlineAfter(roundDeadline.toMillis(), TimeUnit.MILLISECONDS).sync(call);
        } catch (RuntimeException e) {
            round.onPeerFailed(new RepairException(Reason.UNREACHABLE,
                    "cannot open a round with " + peer.peerId() + ": " + e, e));
            return;
        }
        round.start(call);
    }

    /** One round's call: the response observer, and the request side as the session's stream. */
    private final class Call implements ClientResponseObserver<SyncRequest, SyncResponse>, AntiEntropyStream {
        private final AntiEntropyInitiator round;
        private final RequestHeader header;
        private ClientCallStreamObserver<SyncRequest> requests;
        private boolean headerSent;

        Call(AntiEntropyInitiator round, RequestHeader header) {
            this.round = round;
            this.header = header;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<SyncRequest> requestStream) {
            this.requests = requestStream;
            requestStream.disableAutoRequestWithInitial(0);
            requestStream.setOnReadyHandler(round::onReady);
        }

        @Override
        public void onNext(SyncResponse response) {
            round.countBytesReceived(response.getSerializedSize());
            AntiEntropyMessage message;
            try {
                message = AntiEntropyProtoUtils.fromResponse(response);
            } catch (IllegalArgumentException e) {
                round.onPeerFailed(new RepairException(Reason.PROTOCOL, peer.peerId() + " sent a malformed message: "
                        + e.getMessage()));
                requests.cancel("malformed message", null);
                return;
            }
            round.onMessage(message);
        }

        @Override
        public void onError(Throwable t) {
            round.onPeerFailed(AntiEntropyProtoUtils.toRepairException(peer.peerId(), t));
        }

        @Override
        public void onCompleted() {
            round.onPeerClosed();
        }

        @Override
        public boolean isReady() {
            return requests.isReady();
        }

        @Override
        public void send(AntiEntropyMessage message) {
            SyncRequest.Builder request = AntiEntropyProtoUtils.toRequest(message);
            if (!headerSent) {
                request.setHeader(header);
                headerSent = true;
            }
            SyncRequest built = request.build();
            round.countBytesSent(built.getSerializedSize());
            requests.onNext(built);
        }

        @Override
        public void request(int count) {
            requests.request(count);
        }

        @Override
        public void complete() {
            requests.onCompleted();
        }

        @Override
        public void abort(RepairException error) {
            requests.cancel(error.getMessage(), null);
        }
    }
}
