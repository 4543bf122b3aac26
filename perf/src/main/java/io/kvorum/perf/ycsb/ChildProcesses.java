package io.kvorum.perf.ycsb;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

/**
 * Starts child processes and kills those still running when this JVM exits (Ctrl-C, SIGTERM),
 * so that a stopped command leaves no YCSB client behind. Once the JVM is shutting down it starts
 * nothing more: the main thread, woken by its child's death, would otherwise start the next
 * phase and orphan it.
 */
final class ChildProcesses {

    private final Set<Process> running = new HashSet<>();
    private boolean stopping;

    ChildProcesses() {
        Runtime.getRuntime().addShutdownHook(new Thread(this::killAll, "ycsb-children-stop"));
    }

    /** Starts the process, or throws when this JVM is shutting down. */
    synchronized Process start(ProcessBuilder builder) throws IOException, InterruptedException {
        if (stopping) {
            throw new InterruptedException("shutting down: not starting " + String.join(" ", builder.command()));
        }
        Process p = builder.start();
        running.add(p);
        p.onExit().thenRun(() -> forget(p));
        return p;
    }

    private synchronized void forget(Process p) {
        running.remove(p);
    }

    private synchronized void killAll() {
        stopping = true;
        running.forEach(Process::destroyForcibly);
    }
}
