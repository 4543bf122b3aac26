package io.kvorum.testkit;

import io.kvorum.testkit.History.Op;
import io.kvorum.testkit.History.Outcome;
import io.kvorum.testkit.History.Type;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks a history of quorum puts, deletes and gets against what a last-write-wins store with
 * R + W > N promises (docs/operations.md#how-replicas-converge), without seeing the store's timestamps.
 *
 * <p>What can be concluded from the outside. Every put writes a value no other put writes, so a
 * read names the write it returned. A write answered 201/202 is <em>acknowledged</em>; one answered
 * 504 may or may not have been applied, and its timestamp was assigned before that answer; one that
 * got no answer may still be applied at any later time. Timestamps come from hybrid logical
 * clocks over the one kernel clock all nodes share, so a write's timestamp lies between the wall
 * clock when it was sent and when it was answered (milliseconds, logical ties within one). Hence
 * write A is <em>known older</em> than write B when A was answered at least {@link #GUARD_MILLIS}
 * before B was sent; nothing is known of writes that overlap in time, or of unanswered ones.
 *
 * <p>The rule, for every successful read R of key k: let F be the acknowledged writes of k whose
 * answer arrived before R was sent. The quorum of R meets the quorum of each of them, so R returns
 * a version at least as new as each: R's value must come from a write that was sent before R was
 * answered (no phantoms), that was acknowledged or may have been applied, and that is not known
 * older than any write in F (no lost acknowledged write, no write overwritten by an older one, no
 * read going back in time). An absent answer must be explained the same way by some delete, or by
 * the initial state when F is empty. Reads of writes that may or may not have been applied are not
 * required to be monotonic: a partly applied write can be seen by one quorum and missed by the next.
 *
 * <p>Clocks that disagree: when the nodes' wall clocks are skewed from each other (within
 * {@code --max-clock-offset}, docs/operations.md#clocks), a write's timestamp lies within the
 * skew of the interval above, and last-write-wins may order two writes against real time by as
 * much as the spread between the fastest and the slowest clock. {@link #check(List, long)} takes
 * that spread and knows A older than B only when A was answered that much earlier still.
 */
public final class HistoryChecker {

    /** Two milliseconds of wall clock: past the HLC's millisecond granularity with room to spare. */
    public static final long GUARD_MILLIS = 2;

    private HistoryChecker() {
    }

    /** The violations in {@code ops}, each a readable sentence; empty when the history is valid. */
    public static List<String> check(List<Op> ops) {
        return check(ops, 0);
    }

    /**
     * As {@link #check(List)}, for nodes whose wall clocks were up to {@code clockSpreadMillis}
     * apart (the fastest clock's lead over the slowest, at any moment of the history).
     */
    public static List<String> check(List<Op> ops, long clockSpreadMillis) {
        if (clockSpreadMillis < 0) {
            throw new IllegalArgumentException("a clock spread is not negative: " + clockSpreadMillis);
        }
        long guard = GUARD_MILLIS + clockSpreadMillis;
        Map<String, List<Op>> byKey = new HashMap<>();
        Map<String, Op> putsByValue = new HashMap<>();
        for (Op op : ops) {
            byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
            if (op.type() == Type.PUT && putsByValue.put(op.value(), op) != null) {
                throw new IllegalArgumentException("two puts wrote " + op.value() + "; values must be unique");
            }
        }
        List<String> violations = new ArrayList<>();
        for (List<Op> keyOps : byKey.values()) {
            List<Op> acked = keyOps.stream().filter(o -> o.isWrite() && o.isAcked()).toList();
            List<Op> deletes = keyOps.stream()
                    .filter(o -> o.type() == Type.DELETE && o.outcome() != Outcome.NO_EFFECT).toList();
            for (Op read : keyOps) {
                if (read.type() == Type.GET && read.isAcked()) {
                    String v = read.value() == null ? checkAbsent(read, acked, deletes, guard)
                            : checkValue(read, acked, putsByValue, guard);
                    if (v != null) {
                        violations.add(v);
                    }
                }
            }
        }
        return violations;
    }

    /** The acknowledged write answered before {@code read} was sent that was sent last, or null. */
    private static Op latestFloor(Op read, List<Op> acked) {
        Op floor = null;
        for (Op w : acked) {
            if (w.completeNanos() < read.invokeNanos() && (floor == null || w.invokeMillis() > floor.invokeMillis())) {
                floor = w;
            }
        }
        return floor;
    }

    /**
     * Whether {@code candidate} is known to be ordered before a write sent at {@code floor}: it was
     * answered at least {@code guardMillis} before.
     */
    private static boolean knownOlder(Op candidate, Op floor, long guardMillis) {
        if (floor == null || candidate.outcome() == Outcome.MAYBE_ANY_TIME) {
            return false;
        }
        return candidate.completeMillis() + guardMillis <= floor.invokeMillis();
    }

    private static String checkValue(Op read, List<Op> acked, Map<String, Op> putsByValue, long guardMillis) {
        Op write = putsByValue.get(read.value());
        if (write == null || !write.key().equals(read.key())) {
            return "phantom: " + read + " returned a value no put of that key wrote";
        }
        if (write.outcome() == Outcome.NO_EFFECT) {
            return "phantom: " + read + " returned the value of a put that had no effect: " + write;
        }
        if (write.invokeNanos() > read.completeNanos()) {
            return "phantom: " + read + " returned a value before its put was sent: " + write;
        }
        Op floor = latestFloor(read, acked);
        if (knownOlder(write, floor, guardMillis)) {
            return "stale read: " + read + " returned " + write + ", older than " + floor
                    + ", which was acknowledged before the read was sent";
        }
        return null;
    }

    private static String checkAbsent(Op read, List<Op> acked, List<Op> deletes, long guardMillis) {
        Op floor = latestFloor(read, acked);
        if (floor == null) {
            return null; // the initial state
        }
        for (Op d : deletes) {
            if (d.invokeNanos() <= read.completeNanos() && !knownOlder(d, floor, guardMillis)) {
                return null;
            }
        }
        return "lost write: " + read + " found the key absent although " + floor
                + " was acknowledged before the read was sent, and no delete explains it";
    }
}
