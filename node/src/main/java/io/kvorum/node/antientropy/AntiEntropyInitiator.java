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
 *
 * <p>Writes in flight: a write that has reached one replica and not yet the other makes its bucket
 * differ for a moment. So when the first descent finds differing buckets, the initiator waits
 * {@link #CONFIRM_PAUSE}, walks down fresh trees of both sides once more (a query for the root
 * tells the responder to take a fresh tree), and exchanges only the buckets that differed both
 * times. A write that a replica really missed still differs; one that was only in flight does not
 * (Riak's exchanges confirm differences the same way). A round under write load thus exchanges
 * only real differences.
 */
public final class AntiEntropyInitiator extends AntiEntropySession {

    /** Hashes per query, and buckets per message of the differing list: 32 KiB of hashes at most. */
    static final int MAX_INDICES_PER_MESSAGE = 4096;

    /** Long enough for a write in flight to reach every replica it will reach. */
    static final Duration CONFIRM_PAUSE = Duration.ofMillis(500);

    private MerkleDescent descent;
    private int[] firstDescent;

    /**
     * @param scope       the keys to compare; its replication factor is sent to the peer
     * @param executor    where the round's work runs (serially)
     * @param timer       runs the idle check
     * @param idleTimeout how long the peer may send nothing while this side waits, before the round fails
     */
    public AntiEntropyInitiator(String peerId, RepairScope scope, int fanoutBits, int depth, RepairStorage storage,
                                RecordFlow flow, Executor executor, ScheduledExecutorService timer, Duration idleTimeout) {
        super(peerId, scope, fanoutBits, depth, storage, flow, executor, timer, idleTimeout);
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
                    throw RepairException.of(error);
                }
                descent.onHashes(local, hashes.level(), hashes.hashes());
                HashQuery next = descent.nextQuery();
                if (next != null) {
                    send(next);
                } else if (firstDescent == null && descent.differingLeaves().length > 0) {
                    firstDescent = descent.differingLeaves();
                    after(CONFIRM_PAUSE, this::confirm);
                } else {
                    int[] leaves = descent.differingLeaves();
                    sendDifferingBuckets(local.leafCount(), firstDescent == null ? leaves : bothTimes(firstDescent, leaves));
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

    /** The second descent, over fresh trees on both sides. */
    private void confirm() {
        tree = storage.buildTree(scope, fanoutBits, depth);
        descent = new MerkleDescent(fanoutBits, depth, MAX_INDICES_PER_MESSAGE);
        send(descent.nextQuery());
    }

    /** The leaves in both ascending arrays. */
    static int[] bothTimes(int[] first, int[] second) {
        int[] out = new int[Math.min(first.length, second.length)];
        int n = 0;
        for (int i = 0, j = 0; i < first.length && j < second.length; ) {
            if (first[i] == second[j]) {
                out[n++] = first[i];
                i++;
                j++;
            } else if (first[i] < second[j]) {
                i++;
            } else {
                j++;
            }
        }
        return Arrays.copyOf(out, n);
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
