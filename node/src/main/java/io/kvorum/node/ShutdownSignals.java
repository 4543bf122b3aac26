package io.kvorum.node;

import java.util.concurrent.CountDownLatch;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * Runs a graceful shutdown on SIGTERM or SIGINT and exits with the status it returns (docs/operations.md#starting-nodes:
 * SIGTERM exits 0). A JVM shutdown hook alone would exit with 143; handling the signal itself lets
 * the node choose its status. The hook stays as a fallback for other ways the JVM is asked to stop.
 *
 * <p>The handlers are installed before the node starts, so that a signal that comes while it
 * starts (opening its store, joining a cluster) is not the JVM's default, an exit with 143 that
 * leaves the store unclosed. Such a signal interrupts the starting thread, which cuts short what
 * waits (a join); a start that ends anyway is then stopped gracefully at once
 * ({@link #runUntilTerminated}), and one that failed ends the process with status 0 as a stop
 * would ({@link #stopRequested}).
 */
final class ShutdownSignals {

    private static final Logger log = LoggerFactory.getLogger(ShutdownSignals.class);

    private final Thread starting;
    /** Guarded by this: a signal came. */
    private boolean stopRequested;
    /** Guarded by this: how to stop the started node; null while it starts. */
    private IntSupplier shutdown;

    private ShutdownSignals(Thread starting) {
        this.starting = starting;
    }

    /**
     * Handles SIGTERM and SIGINT from now on.
     *
     * @param starting the thread that starts the node, interrupted by a signal that comes meanwhile
     */
    static ShutdownSignals install(Thread starting) {
        ShutdownSignals signals = new ShutdownSignals(starting);
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), signal -> new Thread(signals::onSignal, "shutdown").start());
            } catch (IllegalArgumentException e) {
                log.warn("cannot handle SIG{}; relying on the JVM's shutdown hook", name);
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            IntSupplier stop = signals.claimShutdown();
            if (stop != null) {
                stop.getAsInt();
            }
        }, "shutdown-hook"));
        return signals;
    }

    /** A signal came while the node was starting: its start was interrupted. */
    synchronized boolean stopRequested() {
        return stopRequested;
    }

    /**
     * Hands over the started node's shutdown, then blocks the calling thread (main) for the life of
     * the process: every thread of a node is a daemon, so the JVM stays up only while main waits
     * here. When a signal came while the node started, the node is stopped at once.
     */
    void runUntilTerminated(IntSupplier shutdown) throws InterruptedException {
        boolean stopNow;
        synchronized (this) {
            stopNow = stopRequested;
            this.shutdown = stopNow ? null : shutdown;
        }
        if (stopNow) {
            Thread.interrupted(); // the signal's interrupt: the graceful stop must be free to wait
            Runtime.getRuntime().halt(shutdown.getAsInt());
        }
        new CountDownLatch(1).await();
    }

    private void onSignal() {
        IntSupplier stop;
        synchronized (this) {
            if (stopRequested) {
                return; // a stop is under way
            }
            stopRequested = true;
            stop = shutdown;
            shutdown = null;
            if (stop == null) {
                log.info("stop requested while the node is starting: it stops as soon as it can");
                starting.interrupt();
                return;
            }
        }
        Runtime.getRuntime().halt(stop.getAsInt()); // hooks already done what they must: we closed the node
    }

    /** The shutdown to run, once: null when the node has not started or a signal already ran it. */
    private synchronized IntSupplier claimShutdown() {
        IntSupplier stop = shutdown;
        shutdown = null;
        stopRequested = true;
        return stop;
    }
}
