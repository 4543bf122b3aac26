package io.kvorum.node.coordinator;

import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.metrics.NodeMetrics.DigestFallback;
import io.kvorum.node.metrics.NodeMetrics.ReplicaCounters;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.time.RequestTimer;
import io.kvorum.node.util.Failures;
import io.micrometer.core.instrument.Counter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One GET in flight, read with digests (docs/operations.md#how-replicas-converge): one replica, the data replica, is asked for the
 * key's record and the others only for its {@link RecordDigest}, so that a value crosses the network
 * once rather than {@code from} times.
 *
 * <p>Every answer is a version; a digest counts towards {@code ack} as one, like a record. The read
 * succeeds once {@code ack} replicas answered and this read holds the record of the newest version
 * they named, or that version needs no value (none at all, or a tombstone, which its digest carries
 * whole). So it answers what a read of full records would have, the newest of at least {@code ack}
 * answers, and R + W > from still sees the latest acknowledged write.
 *
 * <p>When the newest version named is a value whose record this read does not hold, it fetches
 * the record from a replica that named that version, after the data replica answered (a mismatch:
 * a digest is newer), failed, or took an eighth of the request timeout (slow: a hedge, if the
 * node's {@link HedgeBudget} allows it; else half of the timeout, so that a data replica that hangs
 * while others answered costs the read time, never its answer): the fallback.
 * Should every replica that named it fail to send it, every other replica that answered is asked
 * for its record once. All of it within the request's one deadline; it fails with
 * {@link NotEnoughReplicasException} when {@code ack} answers are out of reach, or nothing more can
 * be asked and the record of the newest version is still missing.
 *
 * <p>Read repair: once the read is over (answered, or failed) and holds the newest record, each
 * replica that named an older version (or none) is sent it; a replica that answers later is
 * repaired when it does, so one that hangs delays no one's repair (docs/operations.md#how-replicas-converge: within a second). A
 * newer version named late is fetched, and every replica older than it repaired again. The
 * client's answer never waits for any of it.
 *
 * <p>Thread-safe: answers arrive on any thread and are serialized on this object; requests are sent
 * and the result completed outside its lock, because a replica may answer on the calling thread.
 */
final class DigestRead {

    /** The data replica is slow once this fraction of the request timeout has passed without its answer. */
    private static final int SLOW_AFTER_TIMEOUT_DIVISOR = 8;
    /** ... and overdue, fetched from another replica whatever the hedge budget says, after this fraction. */
    private static final int OVERDUE_AFTER_TIMEOUT_DIVISOR = 2;

    final CompletableFuture<Record> result = new CompletableFuture<>();
    private final byte[] key;
    private final HybridLogicalClock hlc;
    private final Counter repairs;
    private final Map<DigestFallback, Counter> fallbacks;
    private final QuorumTracker tracker;
    private final List<Slot> slots;
    private final Slot data;
    private final RequestTimer.Timeout deadline;
    private final RequestTimer.Timeout slowData;
    private final HedgeBudget hedges;
    private final RequestTimer timer;
    private final long timeoutNanos;
    /** Set, under the lock, only for a read whose hedge the budget withheld; cancelled with the others. */
    private volatile RequestTimer.Timeout overdueData = () -> { };

    // guarded by this
    private boolean done;
    private boolean dataSlow;
    private boolean dataOverdue;
    /** Whether the budget allowed a hedge of the slow data replica; null until asked. */
    private Boolean hedged;
    /** The first refusal for overload ({@link QuorumTracker#overload}), or null. */
    private String overload;
    private boolean fellBack;
    private int fetching;

    /** One replica asked, and what it said. */
    static final class Slot {
        final Replica replica;
        final ReplicaCounters counters;
        // guarded by the read
        boolean pending = true;
        /** It named a version: {@link #version}, null for none. */
        boolean answered;
        RecordDigest version;
        /** Its record of {@link #version}, once it sent it. */
        Record record;
        /** The version it was sent by read repair, or null. */
        RecordDigest repairedTo;
        /** Asked for its record: as the data replica, or by a fallback. */
        boolean askedForRecord;
        boolean fetching;

        Slot(Replica replica, ReplicaCounters counters) {
            this.replica = replica;
            this.counters = counters;
        }
    }

    /**
     * @param slots      the key's {@code from} replicas
     * @param data       the one of them asked for the record
     * @param fallbacks  counted once per read that fetched a record beyond the data replica's, by the first cause
     * @param hedges     the node's budget of fetches made because the data replica was slow
     */
    DigestRead(byte[] key, Quorum quorum, List<Slot> slots, Slot data, HybridLogicalClock hlc, RequestTimer timer,
               long timeoutNanos, Counter repairs, Map<DigestFallback, Counter> fallbacks, HedgeBudget hedges) {
        this.key = key;
        this.hedges = hedges;
        this.timer = timer;
        this.timeoutNanos = timeoutNanos;
        this.hlc = hlc;
        this.repairs = repairs;
        this.fallbacks = fallbacks;
        this.tracker = new QuorumTracker(quorum);
        this.slots = slots;
        this.data = data;
        data.askedForRecord = true;
        this.deadline = timer.schedule(this::onDeadline, timeoutNanos, TimeUnit.NANOSECONDS);
        this.slowData = slots.size() > 1
                ? timer.schedule(this::onDataSlow, timeoutNanos / SLOW_AFTER_TIMEOUT_DIVISOR, TimeUnit.NANOSECONDS)
                : () -> { };
        if (slots.size() > 1) {
            hedges.onRead();
        }
    }

    /** Sends the first requests; the result completes later, or already on this thread. */
    DigestRead start() {
        for (Slot s : slots) {
            if (s == data) {
                s.replica.read(key).whenComplete((record, error) -> onRecord(s, record, error, true));
            } else {
                s.replica.readDigest(key).whenComplete((digest, error) -> onAnswer(s, digest, null, error, true));
            }
        }
        return this;
    }

    private void onRecord(Slot s, Record record, Throwable error, boolean first) {
        onAnswer(s, error == null ? RecordDigest.of(record) : null, record, error, first);
    }

    private void onAnswer(Slot s, RecordDigest version, Record record, Throwable error, boolean first) {
        s.counters.answered(Coordinator.outcomeOf(error));
        if (error == null && version != null) {
            hlc.observeFromPeer(version.timestamp()); // not one further ahead than --max-clock-offset
        }
        Actions next;
        synchronized (this) {
            if (first) {
                s.pending = false;
                tracker.onResponse(error == null);
                if (error == null) {
                    s.answered = true;
                    s.version = version;
                    s.record = record;
                } else if (Failures.unwrap(error) instanceof OverloadedException refusal && overload == null) {
                    overload = QuorumTracker.overload(s.replica.nodeId(), refusal);
                }
            } else {
                s.fetching = false;
                fetching--;
                // A fetched record older than the digest (the replica lost it since) leaves the digest's vote.
                if (error == null && RecordDigest.compareVersions(version, s.version) >= 0) {
                    s.version = version;
                    s.record = record;
                }
            }
            next = decide();
        }
        next.run();
    }

    private void onDataSlow() {
        onDataLate(() -> dataSlow = true);
    }

    private void onDataOverdue() {
        onDataLate(() -> dataOverdue = true);
    }

    /** The data replica has not answered by one of its timers: {@code mark} says which (under the lock). */
    private void onDataLate(Runnable mark) {
        Actions next;
        synchronized (this) {
            if (!data.pending) {
                return;
            }
            mark.run();
            next = decide();
        }
        next.run();
    }

    private void onDeadline() {
        Actions next = new Actions();
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
            next.failure = tracker.failure("timed out", overload);
        }
        next.run();
    }

    /** What the state calls for: answer, fail, fetch records, repair. Called with the lock held. */
    private Actions decide() {
        Actions next = new Actions();
        Slot newest = null;
        for (Slot s : slots) {
            if (s.answered && (newest == null || RecordDigest.compareVersions(s.version, newest.version) > 0)) {
                newest = s;
            }
        }
        RecordDigest winner = newest == null ? null : newest.version;
        Record record = recordOf(winner);
        boolean held = winner == null || record != null;

        if (!done && tracker.hasSucceeded() && held) {
            done = true;
            next.answer = record;
            next.answered = true;
        } else if (!done && tracker.hasFailed()) {
            done = true;
            next.failure = tracker.failure("too many replicas failed", overload);
        }

        if (!held && (!done || anyOlderThan(winner)) && (!data.pending || dataOverdue || dataSlow && mayHedge())) {
            fetchRecordOf(winner, next.fetch);
        }
        boolean settled = tracker.pending() == 0 && fetching == 0;
        if (!done && settled) {
            done = true; // answers enough, but the newest version's record could be read from none of them
            next.failure = tracker.failure("the record of the newest version could not be read", overload);
        }
        if ((done || settled) && held && winner != null) {
            for (Slot s : slots) {
                if (s.answered && winner.isNewerThan(s.version) && !winner.equals(s.repairedTo)) {
                    s.repairedTo = winner;
                    next.stale.add(s);
                }
            }
            next.repairWith = record;
        }
        return next;
    }

    /** Whether the data replica, slow, may be hedged: asked of the budget once per read. Called with the lock held. */
    private boolean mayHedge() {
        if (hedged == null) {
            hedged = hedges.tryHedge();
            if (!hedged) {
                // Withheld, the fetch is only put off: the replicas that answered must not wait for the deadline.
                long delay = timeoutNanos / OVERDUE_AFTER_TIMEOUT_DIVISOR - timeoutNanos / SLOW_AFTER_TIMEOUT_DIVISOR;
                overdueData = timer.schedule(this::onDataOverdue, delay, TimeUnit.NANOSECONDS);
            }
        }
        return hedged;
    }

    /** The record of {@code version} when this read holds it; a tombstone's digest is the whole record. */
    private Record recordOf(RecordDigest version) {
        if (version == null) {
            return null;
        }
        for (Slot s : slots) {
            if (s.record != null && version.equals(s.version)) {
                return s.record;
            }
        }
        return version.tombstone() ? version.tombstoneRecord() : null;
    }

    private boolean anyOlderThan(RecordDigest version) {
        for (Slot s : slots) {
            if (s.answered && version.isNewerThan(s.version)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Asks one replica that named {@code version} for its record, unless one is being asked; when
     * every such replica was asked, every other replica that answered and was not asked yet.
     */
    private void fetchRecordOf(RecordDigest version, List<Slot> fetch) {
        Slot holder = null;
        for (Slot s : slots) {
            if (s.answered && version.equals(s.version)) {
                if (s.fetching) {
                    return;
                }
                if (holder == null && !s.askedForRecord) {
                    holder = s;
                }
            }
        }
        if (holder != null) {
            fetch.add(holder);
        } else {
            for (Slot s : slots) {
                if (s.answered && !s.askedForRecord) {
                    fetch.add(s);
                }
            }
        }
        if (fetch.isEmpty()) {
            return;
        }
        for (Slot s : fetch) {
            s.askedForRecord = true;
            s.fetching = true;
            fetching++;
        }
        if (!fellBack) {
            fellBack = true;
            DigestFallback cause = data.answered ? DigestFallback.MISMATCH
                    : data.pending ? DigestFallback.SLOW : DigestFallback.FAILED;
            fallbacks.get(cause).increment();
        }
    }

    /** What a decision calls for, done outside the lock. */
    private final class Actions {
        boolean answered;
        Record answer;
        RuntimeException failure;
        final List<Slot> fetch = new ArrayList<>(0);
        final List<Slot> stale = new ArrayList<>(0);
        Record repairWith;

        void run() {
            if (answered || failure != null) {
                deadline.cancel();
                slowData.cancel();
                overdueData.cancel();
                if (failure != null) {
                    result.completeExceptionally(failure);
                } else {
                    result.complete(answer);
                }
            }
            for (Slot s : fetch) {
                s.replica.read(key).whenComplete((record, error) -> onRecord(s, record, error, false));
            }
            for (Slot s : stale) {
                // Fire and forget: a repair that fails is retried by the next read or by anti-entropy.
                repairs.increment();
                s.replica.write(key, repairWith);
            }
        }
    }
}
