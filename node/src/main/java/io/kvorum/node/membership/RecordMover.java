package io.kvorum.node.membership;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.MemberState;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChange;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.util.Failures;
import io.kvorum.node.util.NamedThreadFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;

/**
 * The thread that moves a node's records through a membership change while the node is in one
 * {@link MemberState} ({@link JoinStream} while joining, {@link LeaveStream} while leaving): started
 * by the first membership that puts the node in that state, it waits out one request timeout (a
 * write that a member began under the previous epoch, without this change's targets, has ended by
 * then), {@link #move moves} the records, and tells the change coordinator ({@code MOVED}), which
 * switches reads and completes the change. A failed step (a peer unreachable, the coordinator
 * refusing for now) is retried after {@link Tuning.Changes#retryInterval}; progress survives in
 * {@link #progress}. {@link RebuildStream} runs on the same thread outside any change, overriding
 * when it runs ({@link #wanted}), its retries and its last step ({@link #finish}).
 */
abstract class RecordMover implements AutoCloseable {

    /** The smallest key there can be: keys are 1 to 1024 bytes. */
    static final byte[] FIRST_KEY = {0};
    /** How long one batch of a scan, or of writes, may take. */
    static final int BATCH_WAIT_SECONDS = 30;

    final ClusterMembership membership;
    final MoveProgress progress;
    final Tuning.Changes tuning;
    private final MemberState state;
    private final NamedThreadFactory threads;
    private final Duration settle;
    private final Logger log;
    private Thread thread; // guarded by this
    private volatile boolean closed;

    /** @param state the state the mover works in; null for one that decides by {@link #wanted} alone */
    RecordMover(ClusterMembership membership, MemberState state, NamedThreadFactory threads, MoveProgress progress,
                Tuning.Changes tuning, Duration settle, Logger log) {
        this.membership = membership;
        this.state = state;
        this.threads = threads;
        this.progress = progress;
        this.tuning = tuning;
        this.settle = settle;
        this.log = log;
    }

    /**
     * Moves every record there is to move under {@code m}, the membership of the change's first
     * epoch, resuming from {@link #progress}.
     */
    abstract void move(Membership m) throws InterruptedException, ExecutionException, TimeoutException;

    boolean isClosed() {
        return closed;
    }

    /** Starts the thread if {@code m} puts this node in the mover's state and it is not running. */
    public void onMembership(Membership m) {
        if (state != null && m.state(membership.selfId()) == state) {
            startThread();
        }
    }

    /** Starts the thread unless it runs or this mover is closed. */
    final synchronized void startThread() {
        if (closed || thread != null) {
            return;
        }
        thread = threads.newThread(this::run);
        thread.start();
    }

    /** Whether there is work: by default, while this node is in the mover's state. */
    boolean wanted() {
        return membership.membership().state(membership.selfId()) == state;
    }

    /** Whether the records have moved under {@code m} already: only {@link #finish} is missing. */
    boolean movedAlready(Membership m) {
        return m.readsFromComing(); // the coordinator switched reads: only its last step is missing
    }

    /** How long to wait before the next attempt, after one that waited {@code previous} failed. */
    Duration nextRetry(Duration previous) {
        return tuning.retryInterval();
    }

    /** What the log lines call this work. */
    String what() {
        return state.jsonName();
    }

    private void run() {
        try {
            Thread.sleep(settle.toMillis()); // see the class comment: the previous epoch's writes end first
            Duration retry = tuning.retryInterval();
            while (!closed && wanted()) {
                try {
                    Membership m = membership.membership();
                    if (!movedAlready(m)) {
                        progress.beginFor(m.epoch());
                        move(m);
                    }
                    finish();
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) { // a peer or the coordinator failed: retried
                    if (closed) {
                        return;
                    }
                    log.warn("{}: {}; retrying in {} ms", what(), Failures.unwrap(e).getMessage(), retry.toMillis());
                    Thread.sleep(retry.toMillis()); // pacing of a retry
                    retry = nextRetry(retry);
                }
            }
        } catch (InterruptedException e) {
            // closing
        } finally {
            synchronized (this) {
                thread = null;
            }
        }
    }

    /** Tells the change coordinator every record has moved; adopts the completed membership. */
    void finish() throws Exception {
        ClusterMember self = membership.membership().topology().member(membership.selfId());
        Membership done = membership.change(new MembershipChange(MembershipChange.Kind.MOVED, self))
                .get(tuning.changeDeadline().toMillis() * 2, TimeUnit.MILLISECONDS);
        membership.adopt(done).get(tuning.changeDeadline().toMillis(), TimeUnit.MILLISECONDS);
        progress.clear();
        log.info("{} done: epoch {}{}", state.jsonName(), done.epoch(),
                done.state(membership.selfId()) == null ? "; this node is no longer a member and may be stopped" : "");
    }

    /** The smallest key after {@code key} in unsigned byte order. */
    static byte[] successor(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    @Override
    public void close() throws InterruptedException {
        Thread t;
        synchronized (this) {
            closed = true;
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            t.join(TimeUnit.SECONDS.toMillis(5));
        }
    }
}
