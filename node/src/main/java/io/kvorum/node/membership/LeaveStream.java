package io.kvorum.node.membership;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.MemberState;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.time.TimestampAheadException;
import io.kvorum.node.util.Failures;
import io.kvorum.node.util.NamedThreadFactory;
import io.kvorum.node.util.Pace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leaving node's hand-over (docs/operations.md#growing-and-shrinking-a-cluster "Leave"): every record it holds goes to each of the
 * key's first replication-factor replicas under the coming membership, continuing ones included,
 * read from local storage in key order and sent through the peers' replica streams, at
 * {@link Tuning.Changes#recordsPerSecond}. A continuing replica may lack it: a write with a
 * {@code from} below the replication factor reached only the key's first {@code from} replicas,
 * and when this node was one of those, the replica that takes its place had none of it (nor
 * anything anti-entropy had not copied yet). Each replica is first asked for its digest of the
 * key, and sent the record only if it holds an older version or none, so that what a continuing
 * replica holds already does not travel again. Progress is kept in {@link MoveProgress#LEAVE_FILE};
 * the rest is {@link RecordMover}'s.
 */
public final class LeaveStream extends RecordMover {

    private static final Logger log = LoggerFactory.getLogger(LeaveStream.class);
    private static final String LOCAL = "local";

    private final RangeSource localRecords;
    private final Map<String, Replica> replicas;

    /**
     * @param localRecords this node's raw entries (tombstones included)
     * @param replicas     every member's replica, by id (a live map)
     * @param settle       how long to wait before the first record: the request timeout
     */
    public LeaveStream(ClusterMembership membership, RangeSource localRecords, Map<String, Replica> replicas,
                       MoveProgress progress, Tuning.Changes tuning, Duration settle) {
        super(membership, MemberState.LEAVING, new NamedThreadFactory("leave-stream"), progress, tuning, settle, log);
        this.localRecords = localRecords;
        this.replicas = replicas;
    }

    @Override
    void move(Membership m) throws InterruptedException, ExecutionException, TimeoutException {
        if (progress.isDone(LOCAL)) {
            return;
        }
        Placement coming = new Placement(m.coming());
        Pace pace = Pace.steady(tuning.recordsPerSecond());
        byte[] after = progress.resumeAfter(LOCAL);
        long handed = 0;
        try (EntryStream stream = localRecords.open(after == null ? FIRST_KEY : successor(after), null)) {
            while (!isClosed()) {
                List<Entry> batch = stream.next().get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                if (batch.isEmpty()) {
                    progress.markDone(LOCAL);
                    log.info("leaving: handed {} records over", handed);
                    return;
                }
                List<CompletableFuture<Boolean>> sent = new ArrayList<>();
                for (Entry e : batch) {
                    RecordDigest ours = RecordDigest.of(e.record());
                    for (ClusterMember target : coming.replicasFor(e.key(), Math.min(m.replicationFactor(), coming.size()))) {
                        Replica replica = replicas.get(target.id());
                        if (replica == null) {
                            throw new IllegalStateException(target.id() + " is not connected");
                        }
                        pace.acquire();
                        sent.add(handOver(replica, e, ours).exceptionally(LeaveStream::skipRefusedTimestamp));
                    }
                }
                CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                handed += sent.stream().filter(CompletableFuture::join).count();
                progress.advance(LOCAL, batch.get(batch.size() - 1).key());
            }
        }
        throw new InterruptedException();
    }

    /**
     * A record a coming replica refused because its timestamp is further ahead of that replica's
     * clock than --max-clock-offset (docs/operations.md#clocks) is skipped, not retried: retrying
     * would hold the leave until real time reached it. Anti-entropy between the key's replicas
     * carries it later.
     */
    private static Boolean skipRefusedTimestamp(Throwable error) {
        if (Failures.unwrap(error) instanceof TimestampAheadException refused) {
            log.warn("leaving: a record was not handed over: {}", refused.getMessage());
            return false;
        }
        throw error instanceof CompletionException c ? c : new CompletionException(error);
    }

    /** Sends the record to {@code replica} unless it holds that version or a newer one already. */
    private static CompletableFuture<Boolean> handOver(Replica replica, Entry e, RecordDigest ours) {
        return replica.readDigest(e.key()).thenCompose(theirs -> ours.isNewerThan(theirs)
                ? replica.write(e.key(), e.record()) : CompletableFuture.completedFuture(false));
    }
}
