package io.kvorum.node.antientropy;

import io.kvorum.node.antientropy.AntiEntropyMessage.DifferingBuckets;
import io.kvorum.node.antientropy.AntiEntropyMessage.Done;
import io.kvorum.node.antientropy.AntiEntropyMessage.HashQuery;
import io.kvorum.node.antientropy.AntiEntropyMessage.NodeHashes;
import io.kvorum.node.antientropy.AntiEntropyMessage.Open;
import io.kvorum.node.antientropy.AntiEntropyMessage.Records;
import java.time.Duration;
import java.util.Arrays;
import java.util.BitSet;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The side of a round that opens it: it sends the round's parameters and the first query at once,
 * builds its own tree meanwhile, walks down both trees ({@link MerkleDescent}) one query at a time,
 * tells the peer which buckets differ, then exchanges their records (see
 * {@link AntiEntropySession}) and half-closes once it has sent its last. The round is over when
 * the peer, having applied everything, ends the stream normally.
 */
public final class AntiEntropyInitiator extends AntiEntropySession {

    /** Hashes per query, and buckets per message of the differing list: 32 KiB of hashes at most. */
    static final int MAX_INDICES_PER_MESSAGE = 4096;

    private final MerkleDescent descent;

    /**
     * @param scope       the keys to compare; its replication factor is sent to the peer
     * @param executor    where the round's work runs (serially)
     * @param timer       runs the idle check
     * @param idleTimeout how long the peer may send nothing while this side waits, before the round fails
     */
    public AntiEntropyInitiator(String peerId, RepairScope scope, int fanoutBits, int depth, RepairStorage storage,
                                Executor executor, ScheduledExecutorService timer, Duration idleTimeout) {
        super(peerId, scope, fanoutBits, depth, storage, executor, timer, idleTimeout);
        this.descent = new MerkleDescent(fanoutBits, depth, MAX_INDICES_PER_MESSAGE);
    }

    /** Starts the round on a stream just opened to the peer. Once. */
    public void start(AntiEntropyStream stream) {
        inSession(() -> {
            bind(stream);
            tree = storage.buildTree(scope, fanoutBits, depth);
            send(new Open(scope.replicationFactor(), fanoutBits, depth));
            send(descent.nextQuery());
            received();
        });
    }

    @Override
    protected void handle(AntiEntropyMessage message) {
        if (message instanceof NodeHashes hashes) {
            if (descent.isFinished()) {
                throw protocol("hashes after the descent");
            }
            tree.whenComplete((local, error) -> inSession(() -> {
                if (error != null) {
                    throw asRepairException(error);
                }
                descent.onHashes(local, hashes.level(), hashes.hashes());
                HashQuery next = descent.nextQuery();
                if (next != null) {
                    send(next);
                } else {
                    sendDifferingBuckets(local.leafCount(), descent.differingLeaves());
                }
                received();
            }));
        } else if (message instanceof Records records) {
            receiveRecords(records.entries());
        } else if (message instanceof Done) {
            receiveDone();
        } else {
            throw protocol("unexpected " + message.getClass().getSimpleName() + " from the responder");
        }
    }

    private void sendDifferingBuckets(int leafCount, int[] leaves) {
        bucketsCompared = leafCount;
        bucketsDiffering = leaves.length;
        int from = 0;
        do {
            int to = Math.min(leaves.length, from + MAX_INDICES_PER_MESSAGE);
            send(new DifferingBuckets(Arrays.copyOfRange(leaves, from, to), to == leaves.length));
            from = to;
        } while (from < leaves.length);
        BitSet buckets = new BitSet(leafCount);
        for (int leaf : leaves) {
            buckets.set(leaf);
        }
        startSending(buckets);
    }

    @Override
    protected boolean peerMayCloseNow() {
        return exchangeOver();
    }

    @Override
    protected void onSentDone() {
        stream.complete();
    }

    @Override
    protected void maybeFinish() {
        if (peerClosed() && exchangeOver()) {
            succeed();
        }
    }
}
