package io.kvorum.node.coordinator;

import io.kvorum.node.error.OverloadedException;

/**
 * Counts replica outcomes for one request against its {@link Quorum}. Plain and synchronous (the
 * shape of Ambry's {@code OperationTracker}): callers feed it outcomes and ask whether the request
 * has succeeded, or can no longer succeed. Not thread-safe; the coordinator serializes calls.
 */
final class QuorumTracker {

    private final int ack;
    private final int from;
    private int successes;
    private int failures;

    QuorumTracker(Quorum quorum) {
        this.ack = quorum.ack();
        this.from = quorum.from();
    }

    /** Records one replica's outcome. Outcomes past {@code from} are a bug in the caller. */
    void onResponse(boolean success) {
        if (successes + failures >= from) {
            throw new IllegalStateException("more than " + from + " responses");
        }
        if (success) {
            successes++;
        } else {
            failures++;
        }
    }

    /** At least {@code ack} replicas succeeded. */
    boolean hasSucceeded() {
        return successes >= ack;
    }

    /** So many replicas failed that {@code ack} successes are out of reach. */
    boolean hasFailed() {
        return failures > from - ack;
    }

    /** Succeeded or failed: nothing a later response says can change the answer. */
    boolean isDone() {
        return hasSucceeded() || hasFailed();
    }

    int successes() {
        return successes;
    }

    /**
     * Why the request failed, for the client: {@link OverloadedException} (503) when no replica took
     * it and one refused for overload, since the request then had no effect; else not enough replicas.
     *
     * @param overload the first refusal for overload, as "replica: its reason", or null if none refused so
     */
    RuntimeException failure(String why, String overload) {
        if (overload != null && successes == 0) {
            return new OverloadedException("replicas are overloaded (" + overload + ")");
        }
        // Failing fast, some replicas may still answer (and apply a write) after this: say so.
        int pending = pending();
        return new NotEnoughReplicasException(why + ": " + successes + " of the " + ack
                + " required replicas (ack=" + ack + ", from=" + from + ") answered, " + failures + " failed"
                + (pending > 0 ? ", " + pending + " had not answered yet" : ""));
    }

    /** A refusal for overload as {@link #failure} names it. */
    static String overload(String replica, Throwable refusal) {
        return replica + ": " + refusal.getMessage();
    }

    /** Replicas that have not answered yet. */
    int pending() {
        return from - successes - failures;
    }
}
