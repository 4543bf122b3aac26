package io.kvorum.node.liveness;

import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.coordinator.ReplicaUnavailableException;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import java.util.concurrent.CompletableFuture;

/**
 * A remote {@link Replica} behind this node's view of its liveness: a request to a peer whose
 * connection failed ({@link PeerLiveness#failsFast}) fails at once (reason {@code KNOWN_DOWN})
 * instead of costing its deadline; every other request is sent, to a merely suspected peer too (a
 * quorum that needs it is not failed on a guess; a write it does not acknowledge in time is hinted
 * as any other). Its outcome teaches {@link PeerLiveness}: an answer, even one that comes after the
 * deadline, means up; a failed connection means down; and a failed connection or a timeout makes
 * {@link Heartbeats} probe the peer now rather than at the next tick.
 */
public record GuardedReplica(Replica peer, PeerLiveness liveness, Heartbeats heartbeats) implements Replica {

    @Override
    public String nodeId() {
        return peer.nodeId();
    }

    @Override
    public CompletableFuture<Record> read(byte[] key) {
        if (liveness.failsFast(peer.nodeId())) {
            return knownDown();
        }
        return observed(peer.read(key));
    }

    @Override
    public CompletableFuture<RecordDigest> readDigest(byte[] key) {
        if (liveness.failsFast(peer.nodeId())) {
            return knownDown();
        }
        return observed(peer.readDigest(key));
    }

    @Override
    public CompletableFuture<Boolean> write(byte[] key, Record record) {
        if (liveness.failsFast(peer.nodeId())) {
            return knownDown();
        }
        return observed(peer.write(key, record));
    }

    private <T> CompletableFuture<T> knownDown() {
        return CompletableFuture.failedFuture(new ReplicaUnavailableException(
                ReplicaUnavailableException.Reason.KNOWN_DOWN, peer.nodeId() + " is down"));
    }

    private <T> CompletableFuture<T> observed(CompletableFuture<T> answer) {
        return answer.whenComplete((result, error) -> {
            if (error == null) {
                liveness.answered(peer.nodeId(), -1);
                return;
            }
            switch (ReplicaUnavailableException.reasonOf(error)) {
                case UNREACHABLE -> {
                    liveness.unreachable(peer.nodeId());
                    heartbeats.probeSoon(peer.nodeId());
                }
                case TIMED_OUT -> {
                    heartbeats.probeSoon(peer.nodeId());
                    CompletableFuture<Void> late = ReplicaUnavailableException.lateAnswerOf(error);
                    if (late != null) { // a late answer is still an answer
                        late.thenRun(() -> liveness.answered(peer.nodeId(), -1));
                    }
                }
                case KNOWN_DOWN, FAILED -> {
                    // an answer (a refusal, overload) or nothing new: the state stands
                }
            }
        });
    }
}
