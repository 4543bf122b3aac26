package io.kvorum.node.membership;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.MemberState;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.PlacementPlan;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.util.NamedThreadFactory;
import io.kvorum.node.util.Pace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A joining node's intake (docs/operations.md#growing-and-shrinking-a-cluster "Join"): from every current member, every record of the keys
 * this node will replicate (among the first replication-factor replicas of the coming membership),
 * read as range scans over the peers' streams (their flow control bounds what is in flight) and
 * written to local storage, newest version winning, at {@link Tuning.Changes#recordsPerSecond}.
 * Every current member is read, not one replica per key: a write acknowledged by a quorum may be
 * on any of them, and the member whose place this node takes must hand over what it holds.
 * Progress is kept per source ({@link MoveProgress#JOIN_FILE}); the rest is {@link RecordMover}'s.
 */
public final class JoinStream extends RecordMover {

    private static final Logger log = LoggerFactory.getLogger(JoinStream.class);

    private final Function<String, RangeSource> sources;
    private final Replica local;

    /**
     * @param sources each peer's raw range source, by id
     * @param local   this node's storage as a replica (keeps the newest version)
     * @param settle  how long to wait before the first scan: the request timeout
     */
    public JoinStream(ClusterMembership membership, Function<String, RangeSource> sources, Replica local,
                      MoveProgress progress, Tuning.Changes tuning, Duration settle) {
        super(membership, MemberState.JOINING, new NamedThreadFactory("join-stream"), progress, tuning, settle, log);
        this.sources = sources;
        this.local = local;
    }

    @Override
    void move(Membership m) throws InterruptedException, ExecutionException, TimeoutException {
        PlacementPlan plan = new PlacementPlan(m);
        Pace pace = Pace.steady(tuning.recordsPerSecond());
        for (ClusterMember source : m.current().members()) {
            if (source.id().equals(membership.selfId()) || progress.isDone(source.id())) {
                continue;
            }
            long taken = takeFrom(source.id(), plan, m.replicationFactor(), pace);
            progress.markDone(source.id());
            log.info("joining: took {} records from {}", taken, source.id());
        }
    }

    private long takeFrom(String sourceId, PlacementPlan plan, int replicationFactor, Pace pace)
            throws InterruptedException, ExecutionException, TimeoutException {
        RangeSource source = sources.apply(sourceId);
        if (source == null) {
            throw new IllegalStateException(sourceId + " is not connected");
        }
        return take(source, sourceId, progress, key -> plan.comingReplica(key, replicationFactor, membership.selfId()),
                local, pace, this::isClosed, n -> { });
    }

    /**
     * Scans {@code source} from where {@code progress} left it and writes to {@code local} every
     * record whose key is {@code mine}, at {@code pace}, a batch at a time; returns how many it
     * wrote, each batch's count also told to {@code taken}. Shared with {@link RebuildStream}.
     *
     * @throws InterruptedException when {@code closed} turns true before the scan ends
     */
    static long take(RangeSource source, String sourceId, MoveProgress progress, Predicate<byte[]> mine, Replica local,
                     Pace pace, BooleanSupplier closed, LongConsumer taken)
            throws InterruptedException, ExecutionException, TimeoutException {
        byte[] after = progress.resumeAfter(sourceId);
        long total = 0;
        try (EntryStream stream = source.open(after == null ? FIRST_KEY : successor(after), null)) {
            while (!closed.getAsBoolean()) {
                List<Entry> batch = stream.next().get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                if (batch.isEmpty()) {
                    return total;
                }
                List<CompletableFuture<Boolean>> writes = new ArrayList<>(batch.size());
                for (Entry e : batch) {
                    if (mine.test(e.key())) {
                        pace.acquire();
                        writes.add(local.write(e.key(), e.record()));
                    }
                }
                CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                total += writes.size();
                taken.accept(writes.size());
                progress.advance(sourceId, batch.get(batch.size() - 1).key());
            }
        }
        throw new InterruptedException();
    }
}
