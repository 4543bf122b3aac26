package io.kvorum.node.coordinator;

import io.micrometer.core.instrument.Counter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many reads may send a second request for a value because the first is slow (a hedge): a
 * tenth of the reads, with a reserve for quiet times, the way Finagle's retry budget and gRPC's
 * retry throttling bound theirs.
 *
 * <p>Why: when replicas are slow because they are overloaded, a hedge is one more full read for an
 * overloaded replica. Unbounded, every read then costs two, the load grows with the slowness, and
 * the replicas answer less. Within the budget a hedge still cuts the tail a single slow replica
 * makes; beyond it the read waits for the replica it asked until half its deadline has passed,
 * then fetches elsewhere all the same (a replica that hangs must not fail reads that others
 * answered; docs/operations.md#how-replicas-converge). Fetches that a
 * read needs to answer at all (the replica asked failed, or a digest named a newer version) are not
 * hedges and never wait for the budget.
 *
 * <p>Each read deposits a tenth of a token, up to {@link #RESERVE} tokens; each hedge withdraws
 * one. It starts full. Thread-safe and lock-free.
 */
final class HedgeBudget {

    /** Tokens in thousandths, so that a deposit is an integer. */
    private static final long ONE = 1000;
    static final int RESERVE = 100;
    private static final long DEPOSIT = ONE / 10;
    private static final long MAX = RESERVE * ONE;

    private final AtomicLong balance = new AtomicLong(MAX);
    private final Counter withheld;

    /** @param withheld counts the hedges refused */
    HedgeBudget(Counter withheld) {
        this.withheld = withheld;
    }

    /** Called once per read that may hedge. */
    void onRead() {
        if (balance.get() < MAX) { // at rest the bucket is full: a read then costs no write
            balance.accumulateAndGet(DEPOSIT, (b, d) -> Math.min(MAX, b + d));
        }
    }

    /** Takes a hedge from the budget; false, taking nothing, when it is spent. */
    boolean tryHedge() {
        long b;
        do {
            b = balance.get();
            if (b < ONE) {
                withheld.increment();
                return false;
            }
        } while (!balance.compareAndSet(b, b - ONE));
        return true;
    }
}
