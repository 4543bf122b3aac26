package io.kvorum.node.membership;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.PlacementPlan;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.rebuild.Rebuild;
import io.kvorum.node.util.NamedThreadFactory;
import io.kvorum.node.util.Pace;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node that lost its data takes back its copies (docs/operations.md#replacing-a-disk): from every
 * other member, every record of the keys this node replicates (among the first replication-factor
 * replicas of its key, under the current or the coming membership), read as a join reads them
 * ({@link JoinStream#take}, at {@link Tuning.Changes#recordsPerSecond}), newest version winning.
 * Progress is kept per source ({@link MoveProgress#REBUILD_FILE}), so a restart resumes; a source
 * that fails (down, unreachable) is tried again after a backoff that doubles from
 * {@link Tuning.Changes#retryInterval} up to {@value #MAX_BACKOFF_FACTOR} times it. Once every
 * source is done, {@link Rebuild#rebuilt} lets this node serve reads. The thread is
 * {@link RecordMover}'s; it runs while {@link Rebuild} says this node rebuilds.
 */
public final class RebuildStream extends RecordMover implements Rebuild.Listener {

    private static final Logger log = LoggerFactory.getLogger(RebuildStream.class);
    static final int MAX_BACKOFF_FACTOR = 16;

    private final Function<String, RangeSource> sources;
    private final Replica local;
    private final Rebuild rebuild;
    private final Counter received;

    /**
     * @param sources  each peer's raw range source, by id
     * @param local    this node's storage as a replica (keeps the newest version)
     * @param settle   how long to wait before the first scan: the request timeout
     * @param received counts the records taken
     */
    public RebuildStream(ClusterMembership membership, Function<String, RangeSource> sources, Replica local,
                         MoveProgress progress, Tuning.Changes tuning, Duration settle, Rebuild rebuild, Counter received) {
        super(membership, null, new NamedThreadFactory("rebuild-stream"), progress, tuning, settle, log);
        this.sources = sources;
        this.local = local;
        this.rebuild = rebuild;
        this.received = received;
    }

    @Override
    public void rebuilding() {
        startThread();
    }

    @Override
    boolean wanted() {
        return rebuild.state() == Rebuild.State.REBUILDING;
    }

    @Override
    boolean movedAlready(Membership m) {
        return false;
    }

    @Override
    Duration nextRetry(Duration previous) {
        Duration longest = tuning.retryInterval().multipliedBy(MAX_BACKOFF_FACTOR);
        Duration doubled = previous.multipliedBy(2);
        return doubled.compareTo(longest) > 0 ? longest : doubled;
    }

    @Override
    String what() {
        return "rebuilding";
    }

    /** Takes from every other member not done yet; the first that fails fails the attempt. */
    @Override
    void move(Membership m) throws InterruptedException, ExecutionException, TimeoutException {
        PlacementPlan plan = new PlacementPlan(m);
        int rf = m.replicationFactor();
        int readRf = Math.min(rf, m.readers().size());
        String self = membership.selfId();
        Pace pace = Pace.steady(tuning.recordsPerSecond());
        for (ClusterMember source : m.topology().members()) {
            if (source.id().equals(self) || progress.isDone(source.id())) {
                continue;
            }
            RangeSource range = sources.apply(source.id());
            if (range == null) {
                throw new IllegalStateException(source.id() + " is not connected");
            }
            long taken = JoinStream.take(range, source.id(), progress,
                    key -> plan.comingReplica(key, rf, self)
                            || plan.readReplicas(key, readRf).stream().anyMatch(r -> r.id().equals(self)),
                    local, pace, this::isClosed, n -> received.increment(n));
            progress.markDone(source.id());
            log.info("rebuilding: took {} records from {}", taken, source.id());
        }
    }

    /** Every member has been read: this node serves reads. */
    @Override
    void finish() throws Exception {
        rebuild.rebuilt();
        progress.clear();
    }
}
