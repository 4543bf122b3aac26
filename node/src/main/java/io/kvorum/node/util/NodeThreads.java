package io.kvorum.node.util;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one place that creates the node's executors, so that every one is named (thread dumps and
 * profiles say who is who), sized by its caller from the configuration, and bounded.
 *
 * <p>Scheduled executors here drop their delayed tasks on shutdown and remove cancelled ones at
 * once, so a stopped node keeps no timers. The threads are daemons: a node that fails to stop one
 * still lets the JVM exit.
 */
public final class NodeThreads {

    private NodeThreads() {
    }

    /** A scheduled executor of {@code threads} threads named {@code name-N}. */
    public static ScheduledThreadPoolExecutor scheduled(String name, int threads) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(threads, new NamedThreadFactory(name));
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        return executor;
    }

    /**
     * A pool of {@code threads} threads named {@code name-N} with a queue of {@code queueCapacity}
     * tasks; {@code execute} throws {@link java.util.concurrent.RejectedExecutionException} when it
     * is full.
     */
    public static ThreadPoolExecutor bounded(String name, int threads, int queueCapacity) {
        return new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queueCapacity), new NamedThreadFactory(name),
                new ThreadPoolExecutor.AbortPolicy());
    }

    /** A thread named {@code name-1} running {@code task}, not started yet. */
    public static Thread single(String name, Runnable task) {
        return new NamedThreadFactory(name).newThread(task);
    }

    /** One named thread with an unbounded queue; for work whose callers bound how much they queue. */
    public static ExecutorService singleExecutor(String name) {
        return Executors.newSingleThreadExecutor(new NamedThreadFactory(name));
    }
}
