package io.kvorum.node.antientropy;

import io.kvorum.node.antientropy.AntiEntropyMessage.DifferingBuckets;
import io.kvorum.node.antientropy.AntiEntropyMessage.Done;
import io.kvorum.node.antientropy.AntiEntropyMessage.HashQuery;
import io.kvorum.node.antientropy.AntiEntropyMessage.NodeHashes;
import io.kvorum.node.antientropy.AntiEntropyMessage.Records;
import java.time.Duration;
import java.util.BitSet;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The side of a round that a peer opened: it builds its tree when the round opens (and again when
 * the initiator starts a second descent with a query for the root), answers the initiator's hash
 * queries, collects the differing buckets, then exchanges their records (see
 * {@link AntiEntropySession}). It ends the stream normally once it has sent its last record, the
 * initiator has half-closed, and every record received is applied, so the initiator's success
 * means both sides are repaired. Created by {@link AntiEntropyService#openResponder}.
 */
public final class AntiEntropyResponder extends AntiEntropySession {

    private final BitSet differing = new BitSet();
    private boolean differingComplete;
    private boolean answered;

    AntiEntropyResponder(String peerId, RepairScope scope, int fanoutBits, int depth, RepairStorage storage,
                         RecordFlow flow, Executor executor, ScheduledExecutorService timer, Duration idleTimeout) {
        super(peerId, scope, fanoutBits, depth, storage, flow, executor, timer, idleTimeout);
    }

    /** Starts serving the round on the stream it was opened on (the open message is consumed). Once. */
    public void start(AntiEntropyStream stream) {
        inSession(() -> {
            bind(stream);
            tree = storage.buildTree(scope, fanoutBits, depth);
            received();
        });
    }

    @Override
    protected void handle(AntiEntropyMessage message) {
        if (message instanceof HashQuery query) {
            if (differingComplete) {
                throw protocol("query after the differing buckets");
            }
            if (query.level() == 0 && answered) {
                tree = storage.buildTree(scope, fanoutBits, depth); // the initiator confirms on fresh trees
            }
            answered = true;
            tree.whenComplete((local, error) -> inSession(() -> {
                if (error != null) {
                    throw RepairException.of(error);
                }
                int[] indices = query.indices();
                long[] hashes = new long[indices.length];
                for (int i = 0; i < indices.length; i++) {
                    if (!local.hasNode(query.level(), indices[i])) {
                        throw protocol("no node " + indices[i] + " at level " + query.level());
                    }
                    hashes[i] = local.hash(query.level(), indices[i]);
                }
                send(new NodeHashes(query.level(), hashes));
                received();
            }));
        } else if (message instanceof DifferingBuckets buckets) {
            if (differingComplete) {
                throw protocol("differing buckets after the last chunk");
            }
            int leafCount = 1 << (fanoutBits * depth);
            for (int b : buckets.buckets()) {
                if (b < 0 || b >= leafCount) {
                    throw protocol("no bucket " + b);
                }
                differing.set(b);
            }
            if (buckets.last()) {
                differingComplete = true;
                bucketsCompared = leafCount;
                bucketsDiffering = differing.cardinality();
                startSending(differing);
            }
            received();
        } else if (message instanceof Records records) {
            if (!differingComplete) {
                throw protocol("records before the differing buckets");
            }
            receiveRecords(records.entries());
        } else if (message instanceof Done) {
            if (!differingComplete) {
                throw protocol("done before the differing buckets");
            }
            receiveDone();
        } else {
            throw protocol("unexpected " + message.getClass().getSimpleName() + " from the initiator");
        }
    }

    @Override
    protected boolean peerMayCloseNow() {
        return true;
    }

    @Override
    protected void onSentDone() {
        // The initiator ends the exchange; this side answers its half-close.
    }

    @Override
    protected void maybeFinish() {
        if (peerClosed() && exchangeOver()) {
            stream.complete();
            succeed();
        }
    }
}
