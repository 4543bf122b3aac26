package io.kvorum.perf.report;

import java.util.List;

/**
 * What one group of a server's threads did during a measured run ({@link ThreadWaits}), in result.json.
 *
 * @param name        the threads' name without its trailing number ("net-io", "storage-writer")
 * @param threads     how many threads of the group were alive at the end of the run
 * @param cpuSeconds  their time on a core
 * @param waitSeconds their time runnable but waiting for a core
 * @param scheduled   how many times they were given a core (each wake-up or preemption ends one)
 */
public record ThreadGroupUse(String name, int threads, double cpuSeconds, double waitSeconds, long scheduled) {

    /** {@code groups} added up, named {@code name}. */
    static ThreadGroupUse sum(String name, List<ThreadGroupUse> groups) {
        int threads = 0;
        double cpu = 0;
        double wait = 0;
        long scheduled = 0;
        for (ThreadGroupUse g : groups) {
            threads += g.threads;
            cpu += g.cpuSeconds;
            wait += g.waitSeconds;
            scheduled += g.scheduled;
        }
        return new ThreadGroupUse(name, threads, cpu, wait, scheduled);
    }
}
