package io.kvorum.node.antientropy;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared executor: the confinement of one
 * anti-entropy session, whose events (messages, flow-control signals, storage completions) arrive
 * on many threads. Tasks submitted after the shared executor shut down are dropped.
 */
final class SerialExecutor implements Executor {

    private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

    private final Executor delegate;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>(); // guarded by this
    private boolean running; // guarded by this

    SerialExecutor(Executor delegate) {
        this.delegate = delegate;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (this) {
            tasks.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        try {
            delegate.execute(this::drain);
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                tasks.clear();
                running = false;
            }
        }
    }

    private void drain() {
        while (true) {
            Runnable task;
            synchronized (this) {
                task = tasks.poll();
                if (task == null) {
                    running = false;
                    return;
                }
            }
            try {
                task.run();
            } catch (RuntimeException e) {
                log.error("anti-entropy task failed", e);
            }
        }
    }
}
