package io.kvorum.node;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * Runs a graceful shutdown on SIGTERM or SIGINT and exits with the status it returns (SPEC §1:
 * SIGTERM exits 0). A JVM shutdown hook alone would exit with 143; handling the signal itself lets
 * the node choose its status. The hook stays as a fallback for other ways the JVM is asked to stop.
 */
final class ShutdownSignals {

    private static final Logger log = LoggerFactory.getLogger(ShutdownSignals.class);

    private ShutdownSignals() {
    }

    /**
     * Installs the handlers, then blocks the calling thread (main) for the life of the process:
     * every thread of a node is a daemon, so the JVM stays up only while main waits here.
     */
    static void runUntilTerminated(IntSupplier shutdown) throws InterruptedException {
        AtomicBoolean started = new AtomicBoolean();
        Runnable stop = () -> {
            if (started.compareAndSet(false, true)) {
                int status = shutdown.getAsInt();
                Runtime.getRuntime().halt(status); // hooks already done what they must: we closed the node
            }
        };
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), signal -> new Thread(stop, "shutdown").start());
            } catch (IllegalArgumentException e) {
                log.warn("cannot handle SIG{}; relying on the JVM's shutdown hook", name);
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (started.compareAndSet(false, true)) {
                shutdown.getAsInt();
            }
        }, "shutdown-hook"));
        new java.util.concurrent.CountDownLatch(1).await();
    }
}
