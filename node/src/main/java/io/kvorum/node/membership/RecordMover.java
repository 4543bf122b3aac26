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
 * {@link #progress}.
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
    public synchronized void onMembership(Membership m) {
        if (closed || thread != null || m.state(membership.selfId()) != state) {
            return;
        }
        thread = threads.newThread(this::run);
        thread.start();
    }

    private void run() {
        try {
            Thread.sleep(settle.toMillis()); // see the class comment: the previous epoch's writes end first
            while (!closed && membership.membership().state(membership.selfId()) == state) {
                try {
                    Membership m = membership.membership();
                    if (!m.readsFromComing()) { // otherwise moved already: only the coordinator's last step is missing
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
                    log.warn("{}: {}; retrying in {} ms", state.jsonName(), Failures.unwrap(e).getMessage(),
                            tuning.retryInterval().toMillis());
                    Thread.sleep(tuning.retryInterval().toMillis()); // pacing of a retry
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
    private void finish() throws InterruptedException, ExecutionException, TimeoutException {
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
