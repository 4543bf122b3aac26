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
import io.kvorum.node.time.TimestampAheadException;
import io.kvorum.node.util.Failures;
import io.kvorum.node.util.NamedThreadFactory;
import io.kvorum.node.util.Pace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leaving node's hand-over (docs/operations.md#growing-and-shrinking-a-cluster "Leave"): every record it holds goes to the replicas that
 * the key gains when this node is gone (those among its first replication-factor replicas of the
 * coming membership that are not among those of the current one), read from local storage in key
 * order and written through the peers' replica streams, at {@link Tuning.Changes#recordsPerSecond}.
 * A replica that keeps the key anyway needs nothing: every write acknowledged by a quorum of the
 * current replicas is then still held by as many of the coming ones. Progress is kept in
 * {@link MoveProgress#LEAVE_FILE}; the rest is {@link RecordMover}'s.
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
        Placement current = new Placement(m.current());
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
                List<CompletableFuture<Boolean>> writes = new ArrayList<>();
                for (Entry e : batch) {
                    for (String target : gainers(e.key(), current, coming, m.replicationFactor())) {
                        Replica replica = replicas.get(target);
                        if (replica == null) {
                            throw new IllegalStateException(target + " is not connected");
                        }
                        pace.acquire();
                        writes.add(replica.write(e.key(), e.record()).exceptionally(LeaveStream::skipRefusedTimestamp));
                    }
                }
                CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                handed += writes.size();
                progress.advance(LOCAL, batch.get(batch.size() - 1).key());
            }
        }
        throw new InterruptedException();
    }

    /**
     * A record its gainer refused because its timestamp is further ahead of the gainer's clock than
     * --max-clock-offset (docs/operations.md#clocks) is skipped, not retried: retrying would hold the
     * leave until real time reached it. Anti-entropy between the key's replicas carries it later.
     */
    private static Boolean skipRefusedTimestamp(Throwable error) {
        if (Failures.unwrap(error) instanceof TimestampAheadException refused) {
            log.warn("leaving: a record was not handed over: {}", refused.getMessage());
            return false;
        }
        throw error instanceof CompletionException c ? c : new CompletionException(error);
    }

    /** The key's replicas under the coming membership that are not replicas under the current one. */
    static Set<String> gainers(byte[] key, Placement current, Placement coming, int rf) {
        Set<String> now = new HashSet<>();
        current.replicasFor(key, Math.min(rf, current.size())).forEach(m -> now.add(m.id()));
        Set<String> gained = new HashSet<>();
        for (ClusterMember m : coming.replicasFor(key, Math.min(rf, coming.size()))) {
            if (!now.contains(m.id())) {
                gained.add(m.id());
            }
        }
        return gained;
    }
}
