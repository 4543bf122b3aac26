package io.kvorum.node.coordinator;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.PlacementPlan;
import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.metrics.NodeMetrics;
import io.kvorum.node.metrics.NodeMetrics.DigestFallback;
import io.kvorum.node.metrics.NodeMetrics.ReplicaCounters;
import io.kvorum.node.metrics.NodeMetrics.ReplicaOutcome;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.time.TimestampAheadException;
import io.kvorum.node.util.Failures;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Coordinates entity requests: picks the key's {@code from} replicas, sends to all of them in
 * parallel, and completes as soon as {@code ack} answered, or fails as soon as that has become
 * impossible or the request timeout passed. It never waits for slow replicas after answering.
 *
 * <p>Writes are stamped here with this node's hybrid logical clock; every timestamp read back from
 * a replica moves that clock forward, so a later write through this node orders after it.
 *
 * <p>Failures: {@link NotEnoughReplicasException} (HTTP 504), or {@link OverloadedException}
 * (HTTP 503) when no replica took the request and at least one refused it for overload; a write
 * answers 503 only when every one of its replicas refused it so, since only then it had no effect
 * anywhere (docs/http-api.md), and keeps no hint for it; a write also fails with
 * {@link ClockOffsetException} (HTTP 503) while this node's clock is off from its peers'.
 */
public final class Coordinator {

    private final String selfId;
    private volatile PlacementPlan plan;
    private final Map<String, Replica> replicas;
    private final NodeMetrics metrics;
    private final HybridLogicalClock hlc;
    private final Clock clock;
    private final long timeoutNanos;
    private final RequestTimer timer;
    private final RangeSource rangeSource;
    private final HintSink hints;
    /** What each replica answered, by node id; resolved on a member's first request. */
    private final Map<String, ReplicaCounters> answers = new ConcurrentHashMap<>();
    private final Counter readRepairs;
    private final Map<DigestFallback, Counter> digestFallbacks;
    private final LargeWriteAdmission largeWrites;
    private final HedgeBudget hedges;
    /** Why this node may not stamp writes now, or null; see {@link #refuseWrites}. */
    private volatile String clockRefusal;

    /** A coordinator that keeps no hints ({@link HintSink#NONE}); see the full constructor. */
    public Coordinator(String selfId, Placement placement, Map<String, Replica> replicas, HybridLogicalClock hlc,
                       Clock clock, Duration requestTimeout, RequestTimer timer,
                       RangeSource rangeSource) {
        this(selfId, placement, replicas, hlc, clock, requestTimeout, timer, rangeSource, HintSink.NONE);
    }

    /** A coordinator whose meters are its own ({@link NodeMetrics#unregistered}); see the full constructor. */
    public Coordinator(String selfId, Placement placement, Map<String, Replica> replicas, HybridLogicalClock hlc,
                       Clock clock, Duration requestTimeout, RequestTimer timer,
                       RangeSource rangeSource, HintSink hints) {
        this(selfId, PlacementPlan.of(placement), replicas, hlc, clock, requestTimeout, timer, rangeSource, hints,
                NodeMetrics.unregistered());
    }

    /**
     * @param plan        where keys live; {@link #usePlan} replaces it when the membership changes
     * @param replicas    one {@link Replica} per cluster member, by node id: a live map, which gains a
     *                    member before any plan names it
     * @param timer       runs request timeouts
     * @param rangeSource where ranges are read from
     * @param hints       receives each write that a remote replica did not acknowledge
     * @param metrics     counts each replica's answers ({@code kvorum_replica_requests_total}), read repairs and
     *                    digest reads' fallbacks
     */
    public Coordinator(String selfId, PlacementPlan plan, Map<String, Replica> replicas, HybridLogicalClock hlc,
                       Clock clock, Duration requestTimeout, RequestTimer timer,
                       RangeSource rangeSource, HintSink hints, NodeMetrics metrics) {
        this.metrics = metrics;
        this.readRepairs = metrics.readRepairs();
        Map<DigestFallback, Counter> fallbacks = new EnumMap<>(DigestFallback.class);
        for (DigestFallback cause : DigestFallback.values()) {
            fallbacks.put(cause, metrics.digestFallbacks(cause));
        }
        this.digestFallbacks = Collections.unmodifiableMap(fallbacks);
        this.selfId = selfId;
        this.plan = plan;
        this.replicas = replicas;
        this.hlc = hlc;
        this.clock = clock;
        this.timeoutNanos = requestTimeout.toNanos();
        this.timer = timer;
        this.rangeSource = rangeSource;
        this.hints = hints;
        this.largeWrites = new LargeWriteAdmission(clock, timer, requestTimeout, LargeWriteAdmission.memoryCeiling());
        this.hedges = new HedgeBudget(metrics.digestHedgesWithheld());
    }

    /** Places keys by {@code next} from now on; requests in flight keep the plan they started with. */
    public void usePlan(PlacementPlan next) {
        plan = next;
    }

    /**
     * The member's replica. A request placed by the plan of the previous epoch may name a member that
     * left or was removed since and is disconnected already: that replica fails at once, as one that
     * is down does.
     */
    private Replica replica(String nodeId) {
        Replica r = replicas.get(nodeId);
        return r != null ? r : new DepartedReplica(nodeId);
    }

    /** A member that is no longer connected: every request fails at once. */
    private record DepartedReplica(String nodeId) implements Replica {
        @Override
        public CompletableFuture<Record> read(byte[] key) {
            return CompletableFuture.failedFuture(gone());
        }

        @Override
        public CompletableFuture<RecordDigest> readDigest(byte[] key) {
            return CompletableFuture.failedFuture(gone());
        }

        @Override
        public CompletableFuture<Boolean> write(byte[] key, Record record) {
            return CompletableFuture.failedFuture(gone());
        }

        private ReplicaUnavailableException gone() {
            return new ReplicaUnavailableException(ReplicaUnavailableException.Reason.UNREACHABLE,
                    nodeId + " is no longer a member");
        }
    }

    private ReplicaCounters answers(String nodeId) {
        return answers.computeIfAbsent(nodeId, metrics::replicas);
    }

    /**
     * The newest version among at least {@code ack} answers, read with digests ({@link DigestRead}):
     * null if none has the key. The result may be a tombstone or expired; the caller answers those
     * as absent. The record is asked of this node's own replica when it is one of the key's, else of
     * the first in the key's preference order; the others send digests.
     */
    public CompletableFuture<Record> get(byte[] key, Quorum quorum) {
        List<ClusterMember> targets = plan.readReplicas(key, quorum.from());
        List<DigestRead.Slot> slots = new ArrayList<>(targets.size());
        DigestRead.Slot data = null;
        for (ClusterMember target : targets) {
            DigestRead.Slot slot = new DigestRead.Slot(replica(target.id()), answers(target.id()));
            slots.add(slot);
            if (target.id().equals(selfId)) {
                data = slot;
            }
        }
        if (data == null) {
            data = slots.get(0);
        }
        return new DigestRead(key, quorum, slots, data, hlc, timer, timeoutNanos, readRepairs, digestFallbacks,
                hedges).start().result;
    }

    /**
     * Until called again with null, every put and delete fails with {@link ClockOffsetException}
     * saying {@code why}, before anything is stamped: a node whose clock is off from its peers'
     * would misorder the writes it stamps ({@code liveness.ClockOffsets} decides).
     */
    public void refuseWrites(String why) {
        clockRefusal = why;
    }

    /**
     * Why this node refuses writes now, or null: its wall clock is off from its peers'
     * ({@link #refuseWrites}), or its hybrid clock has run further ahead of its wall clock than its
     * peers take timestamps from (docs/operations.md#clocks), as after its wall clock was set back
     * or stepped ahead for a moment: every write it stamped would be refused by its replicas (in a
     * cluster of one, nobody refuses them).
     */
    private String clockRefusal() {
        String refused = clockRefusal;
        if (refused != null) {
            return refused;
        }
        long lead = hlc.leadMillis();
        boolean peersJudge = replicas.size() > 1; // alone, nobody refuses what this node stamps
        return peersJudge && hlc.isBeyondBound(lead) ? "this node's timestamps run " + lead + " ms ahead of its wall clock, more than "
                + "--max-clock-offset (its clock was set back, or stepped ahead for a while), so its peers would refuse "
                + "the writes it stamps; write through another node until its wall clock catches up" : null;
    }

    /** Writes a value; {@code ttlMillis > 0} makes it expire that long after now. */
    public CompletableFuture<Record> put(byte[] key, byte[] value, long ttlMillis, Quorum quorum) {
        String refused = clockRefusal();
        if (refused != null) {
            return CompletableFuture.failedFuture(new ClockOffsetException(refused));
        }
        long expiresAt = ttlMillis > 0 ? clock.currentTimeMillis() + ttlMillis : Record.NEVER_EXPIRES;
        if (!LargeWriteAdmission.isLarge(value.length)) {
            return write(key, Record.value(hlc.now(), selfId, value, expiresAt), quorum, timeoutNanos, false).result;
        }
        return largeWrites.admit(value.length).handle((ticket, overload) -> {
            if (overload != null) {
                metrics.storageRejected().increment(); // docs/operations.md#metrics: the requests refused with 503
                return CompletableFuture.<Record>failedFuture(overload);
            }
            // Stamped once admitted, and given what is left of the request timeout after the wait.
            Operation op = write(key, Record.value(hlc.now(), selfId, value, expiresAt), quorum, ticket.budgetNanos(),
                    true);
            op.result.whenComplete((record, error) -> largeWrites.answered(ticket, error == null));
            op.settled.thenRun(() -> largeWrites.released(ticket));
            return op.result;
        }).thenCompose(written -> written);
    }

    /** Writes a tombstone. */
    public CompletableFuture<Record> delete(byte[] key, Quorum quorum) {
        String refused = clockRefusal();
        if (refused != null) {
            return CompletableFuture.failedFuture(new ClockOffsetException(refused));
        }
        return write(key, Record.tombstone(hlc.now(), selfId), quorum, timeoutNanos, false).result;
    }

    /**
     * Writes a record restored from a backup (docs/operations.md#restore) as it is: its timestamp,
     * writer, tombstone and expiry are kept, so each replica keeps it only when it holds no newer
     * version, and restoring it again changes nothing. It goes the way of a put (fan-out, quorum,
     * hints), but is not stamped here, so a clock refusal does not apply.
     */
    public CompletableFuture<Record> restore(byte[] key, Record record, Quorum quorum) {
        return write(key, record, quorum, timeoutNanos, false).result;
    }

    /**
     * Sends the record to the key's {@code from} replicas (during a membership change, those of the
     * current membership and those of the coming one, each set needing {@code ack}). A remote
     * replica that does not acknowledge it, before or after the client was answered, gets a hint
     * (docs/operations.md#hinted-handoff); one that timed out gets it only if it does not take the
     * write late either. The answer waits until the hints made before it are written.
     *
     * @param trackSettled whether the operation's {@link Operation#settled} is to complete (it
     *                     costs an atomic counter per call, which small writes spare)
     */
    private Operation write(byte[] key, Record record, Quorum quorum, long budgetNanos, boolean trackSettled) {
        PlacementPlan.WriteTargets targets = plan.writeTargets(key, quorum.from());
        Operation op = new Operation(key, record, quorum, targets.groups(), budgetNanos,
                trackSettled ? targets.members().size() : -1);
        for (ClusterMember target : targets.members()) {
            Replica replica = replica(target.id());
            // A departed member gets no hint: it will not be back to take it.
            boolean remote = !target.id().equals(selfId) && !(replica instanceof DepartedReplica);
            ReplicaCounters answered = answers(target.id());
            replica.write(key, record).whenComplete((ignored, error) -> {
                answered.answered(outcomeOf(error));
                // A replica that refused the timestamp would refuse its hint the same way.
                boolean hint = error != null && remote && !(Failures.unwrap(error) instanceof TimestampAheadException);
                op.onResponse(target.id(), record, error, hint);
                if (trackSettled) {
                    CompletableFuture<Void> lateAnswer = ReplicaUnavailableException.lateAnswerOf(error);
                    if (lateAnswer == null) {
                        op.callSettled();
                    } else {
                        lateAnswer.whenComplete((taken, lateError) -> op.callSettled());
                    }
                }
            });
        }
        return op;
    }

    /**
     * Whether a replica's failure left the write without effect there: refused for overload or for its
     * timestamp, or never sent because the peer is known to be down.
     */
    static boolean withoutEffect(Throwable error) {
        Throwable t = Failures.unwrap(error);
        return t instanceof OverloadedException || t instanceof TimestampAheadException
                || ReplicaUnavailableException.reasonOf(t) == ReplicaUnavailableException.Reason.KNOWN_DOWN;
    }

    /** How a replica answered, for {@code kvorum_replica_requests_total}. */
    static ReplicaOutcome outcomeOf(Throwable error) {
        if (error == null) {
            return ReplicaOutcome.OK;
        }
        Throwable t = Failures.unwrap(error);
        if (t instanceof OverloadedException) {
            return ReplicaOutcome.OVERLOADED;
        }
        return ReplicaUnavailableException.reasonOf(t) == ReplicaUnavailableException.Reason.TIMED_OUT
                ? ReplicaOutcome.TIMEOUT : ReplicaOutcome.UNAVAILABLE;
    }

    /**
     * The live entries (no tombstones, nothing expired) with {@code start <= key < end}, in key
     * order; {@code end == null} means to the last key.
     */
    public EntryStream range(byte[] start, byte[] end) {
        return new LiveEntryFilter(rangeSource.open(start, end), clock);
    }

    /**
     * One write in flight: a tracker per group of targets (one, or two during a membership change),
     * the record, and its deadline. It succeeds once every group has {@code ack} successes.
     * When tracked, {@link #settled} completes later, once no replica call holds the record any
     * more: each has answered or failed, and one that timed out has had its late answer or given
     * up on it.
     *
     * <p>Hints: the outcome is decided first; {@link #result} completes once the hints made until
     * then are written (docs/operations.md#hinted-handoff), or at the deadline. A replica that
     * refused the write without effect is hinted only once the outcome is known not to be a 503
     * (no effect anywhere, and no hint kept).
     */
    private final class Operation {
        final CompletableFuture<Record> result = new CompletableFuture<>();
        /** Null unless tracked. */
        final CompletableFuture<Void> settled;
        private final AtomicInteger unsettledCalls;
        private final byte[] key;
        private final Record record;
        private final List<Set<String>> groups;
        private final List<QuorumTracker> trackers = new ArrayList<>(2);
        private final RequestTimer.Timeout deadline;
        private Record newest;
        /** The first refusal for overload ({@link QuorumTracker#overload}), or null. */
        private String overload;
        /** Replica calls not answered yet, and those that succeeded or failed in a way that may have stored it. */
        private int pending;
        private int mayHaveTakenIt;
        /** Whether the outcome is known (the answer may still wait for hints), and whether it is a 503. */
        private boolean decided;
        private boolean withoutEffectAnywhere;
        /** Replicas that refused it without effect, to hint unless it is answered 503; null when none. */
        private List<String> hintIfTaken;
        /** Hints made before the outcome was decided and not written yet; null when none. */
        private List<CompletableFuture<Void>> unwritten;

        /**
         * @param budgetNanos how long it may take: the request timeout, less what it waited for admission
         * @param calls       the replica calls whose settling {@link #settled} awaits; negative: untracked
         */
        Operation(byte[] key, Record record, Quorum quorum, List<Set<String>> groups, long budgetNanos, int calls) {
            this.unsettledCalls = calls < 0 ? null : new AtomicInteger(calls);
            this.settled = calls < 0 ? null : new CompletableFuture<>();
            if (calls == 0) {
                settled.complete(null);
            }
            this.key = key;
            this.record = record;
            this.groups = groups;
            Set<String> targets = new HashSet<>();
            groups.forEach(targets::addAll);
            this.pending = targets.size();
            for (Set<String> group : groups) {
                trackers.add(new QuorumTracker(new Quorum(quorum.ack(), group.size())));
            }
            this.deadline = timer.schedule(this::onDeadline, budgetNanos, TimeUnit.NANOSECONDS);
        }

        /** @param hint whether the replica gets a hint of the write, having failed it */
        synchronized void onResponse(String nodeId, Record record, Throwable error, boolean hint) {
            if (hint) {
                if (withoutEffect(error)) {
                    hintUnlessWithoutEffectAnywhere(nodeId);
                } else {
                    hintUnlessTakenLate(nodeId, ReplicaUnavailableException.lateAnswerOf(error));
                }
            }
            if (decided) {
                return; // late responses change nothing
            }
            boolean success = error == null;
            pending--;
            if (success) {
                newest = Record.newest(newest, record);
            }
            if (Failures.unwrap(error) instanceof OverloadedException refusal) {
                overload = overload != null ? overload : QuorumTracker.overload(nodeId, refusal);
            }
            if (success || !withoutEffect(error)) {
                mayHaveTakenIt++;
            }
            boolean succeeded = true;
            QuorumTracker failed = null;
            for (int i = 0; i < groups.size(); i++) {
                QuorumTracker tracker = trackers.get(i);
                if (groups.get(i).contains(nodeId)) {
                    tracker.onResponse(success);
                }
                succeeded &= tracker.hasSucceeded();
                if (tracker.hasFailed()) {
                    failed = tracker;
                }
            }
            if (failed != null) {
                if (mayHaveTakenIt == 0 && pending > 0) {
                    return; // every answer so far left it without effect: a 503 if the others refuse it too
                }
                decide(null, mayHaveTakenIt == 0 ? failed.failure("too many replicas failed", overload)
                        : failed.failure("too many replicas failed", null));
            } else if (succeeded) {
                decide(newest, null);
            }
        }

        /** A replica that refused it without effect: hinted unless the write is answered 503. */
        private void hintUnlessWithoutEffectAnywhere(String nodeId) {
            if (!decided) {
                if (hintIfTaken == null) {
                    hintIfTaken = new ArrayList<>(2);
                }
                hintIfTaken.add(nodeId);
            } else if (!withoutEffectAnywhere) {
                hint(nodeId);
            }
        }

        /**
         * Hints a write its replica did not acknowledge in time, unless the replica takes it after all
         * ({@code lateAnswer}, when not null): a call that timed out is still awaited a while, and a
         * write applied late needs no hint. Under load that matters: a hint is the whole value written
         * again, here and later on the replica.
         */
        private void hintUnlessTakenLate(String nodeId, CompletableFuture<Void> lateAnswer) {
            if (lateAnswer == null) {
                hint(nodeId);
            } else {
                lateAnswer.whenComplete((taken, lateError) -> {
                    if (lateError != null) {
                        hintLate(nodeId);
                    }
                });
            }
        }

        private synchronized void hintLate(String nodeId) {
            hint(nodeId);
        }

        /** Hints the write for {@code nodeId}; until the outcome is decided, the answer will wait for it. */
        private void hint(String nodeId) {
            CompletableFuture<Void> written = hints.hint(nodeId, key, record);
            if (!decided && !written.isDone()) {
                if (unwritten == null) {
                    unwritten = new ArrayList<>(2);
                }
                unwritten.add(written);
            }
        }

        /** Decides the outcome: answers a 503 at once, anything else once the hints made so far are written. */
        private void decide(Record written, RuntimeException failure) {
            withoutEffectAnywhere = failure instanceof OverloadedException;
            if (hintIfTaken != null && !withoutEffectAnywhere) {
                hintIfTaken.forEach(this::hint);
            }
            decided = true;
            if (unwritten == null) {
                answer(written, failure);
            } else {
                CompletableFuture.allOf(unwritten.toArray(CompletableFuture[]::new))
                        .whenComplete((ignored, never) -> answer(written, failure));
            }
        }

        private void answer(Record written, RuntimeException failure) {
            deadline.cancel();
            if (failure != null) {
                result.completeExceptionally(failure);
            } else {
                result.complete(written);
            }
        }

        void callSettled() {
            if (unsettledCalls.decrementAndGet() == 0) {
                settled.complete(null);
            }
        }

        private synchronized void onDeadline() {
            if (result.isDone()) {
                return;
            }
            if (decided) {
                result.completeExceptionally(new NotEnoughReplicasException("timed out writing the hints of "
                        + unwritten.size() + " replica(s) that missed the write: it may or may not be kept"));
                return;
            }
            QuorumTracker unmet = trackers.stream().filter(t -> !t.hasSucceeded()).findFirst().orElse(trackers.get(0));
            // Replicas still to answer may take the write late: its outcome is unknown (504), never 503.
            RuntimeException failure = unmet.failure("timed out", null);
            decide(null, failure); // hints the replicas that refused it; the deadline does not wait for them
            result.completeExceptionally(failure);
        }
    }

    /** Drops tombstones and expired records from a raw stream; never returns an empty batch early. */
    private static final class LiveEntryFilter implements EntryStream {
        private final EntryStream source;
        private final Clock clock;

        LiveEntryFilter(EntryStream source, Clock clock) {
            this.source = source;
            this.clock = clock;
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            return source.next().thenCompose(batch -> {
                if (batch.isEmpty()) {
                    return CompletableFuture.completedFuture(batch);
                }
                long now = clock.currentTimeMillis();
                List<Entry> live =
                        batch.stream().filter(e -> !e.record().readsAsAbsentAt(now)).toList();
                // A batch made only of dead entries must not read as the end of the stream.
                return live.isEmpty() ? next() : CompletableFuture.completedFuture(live);
            });
        }

        @Override
        public void close() {
            source.close();
        }
    }
}
