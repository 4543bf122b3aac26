package io.kvorum.node.storage;

import java.util.concurrent.TimeUnit;

/**
 * Whether storage work that usually goes to a storage thread may run on its caller's thread (an
 * event loop) when that storage thread is idle: not for a second after such a run was slow.
 *
 * <p>Why: a commit or a read of a cached block takes microseconds, and running it where it was
 * asked spares two thread hand-offs, each a wake-up and a wait for a core. A slow one (LevelDB
 * slowing its writers down, a read that goes to the disk) would hold the event loop and every
 * connection on it, so after one, the storage threads take all the work for a while. A run that
 * was slow because its thread lost its core meanwhile pauses it too, which costs nothing but the
 * hand-offs.
 *
 * <p>Thread-safe; times are {@link System#nanoTime}-like readings of the caller's clock.
 */
final class InlinePause {

    /** A run slower than this (one takes tens of microseconds) ... */
    static final long SLOW_NANOS = TimeUnit.MICROSECONDS.toNanos(500);
    /** ... sends all the work to the storage threads for this long. */
    static final long PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Until when runs are paused; 0: never paused. */
    private volatile long pausedUntil;

    boolean paused(long now) {
        long until = pausedUntil;
        return until != 0 && now - until < 0;
    }

    /** Notes a run that started at {@code start} and took {@code took}; returns whether it paused inline runs. */
    boolean ran(long start, long took) {
        if (took <= SLOW_NANOS) {
            return false;
        }
        pausedUntil = start + took + PAUSE_NANOS;
        return true;
    }
}
