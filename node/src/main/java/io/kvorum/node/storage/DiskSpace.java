package io.kvorum.node.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps {@code --min-free-disk} bytes free on the file system of the data directory, by refusing
 * writes that would go below it.
 *
 * <p>Why: LevelDB appends to its log through a memory map, and a page of the map that the file
 * system cannot back (it is full) kills the process with SIGBUS, without a log line. Measured: a
 * node whose data directory had 20 MiB left crashed at the write that filled it. With a reserve, a full disk
 * costs writes (503) and nothing else: reads go on, and LevelDB keeps the room its flushes and
 * compactions need.
 *
 * <p>How: {@link #check} reads the free space (a {@code statfs}) every 250 ms; between two checks
 * {@link #tryWrite} subtracts what it admitted from the last reading, so that a burst cannot go
 * past the reserve before the next check sees it. The estimate counts records as their key and
 * value; LevelDB's own overhead, its compactions and other processes' files are what the reserve
 * is for.
 *
 * <p>Thread-safe: writers on any thread, {@link #check} on one.
 */
public final class DiskSpace {

    private static final Logger log = LoggerFactory.getLogger(DiskSpace.class);
    /** A reserve of 0: every write is admitted and nothing is read. */
    public static final DiskSpace UNCHECKED = new DiskSpace(() -> Long.MAX_VALUE, 0);

    /** The free space below which the store is not opened at all ({@link #tooFullToOpen}). */
    public static final long ROOM_TO_OPEN = 64L << 20;

    private final LongSupplier usableBytes;
    private final long reserve;
    /** Free bytes as of the last {@link #check}. */
    private volatile long usable;
    /** Bytes admitted since the last {@link #check}. */
    private final AtomicLong admitted = new AtomicLong();
    /** A write was refused since the last {@link #check}. */
    private volatile boolean refusedSinceCheck;
    private boolean refusing; // the checking thread's: what the log last said

    /**
     * @param usableBytes reads the free space (for tests, a fake)
     * @param reserve     bytes to keep free; 0 turns the check off
     */
    public DiskSpace(LongSupplier usableBytes, long reserve) {
        this.usableBytes = usableBytes;
        this.reserve = reserve;
        this.usable = reserve == 0 ? Long.MAX_VALUE : usableBytes.getAsLong();
    }

    /** The guard of the file system that holds {@code dir}. */
    public static DiskSpace of(Path dir, long reserve) throws IOException {
        FileStore store = Files.getFileStore(dir);
        return new DiskSpace(() -> {
            try {
                return store.getUsableSpace();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, reserve);
    }

    /**
     * Why the store may not be opened on this file system, or null when it may: with less than
     * {@value #ROOM_TO_OPEN} bytes free (and the check on), opening could fill it, for LevelDB turns
     * its log into a table and starts a new log and manifest as it opens, through memory maps, and
     * a full disk under a map kills the process with SIGBUS. Reads the free space afresh.
     */
    public String tooFullToOpen() {
        if (reserve == 0) {
            return null;
        }
        long free = usableBytes.getAsLong();
        return free >= ROOM_TO_OPEN ? null : "its file system has " + free + " bytes free, too few for the store to open"
                + " safely (at least " + ROOM_TO_OPEN + "; writes need --min-free-disk " + reserve + "): free space and"
                + " start again";
    }

    /** Reads the free space again; logs when writes stop or start being refused. Call every 250 ms. */
    public void check() {
        if (reserve == 0) {
            return;
        }
        long now;
        try {
            now = usableBytes.getAsLong();
        } catch (UncheckedIOException e) {
            log.warn("cannot read the free space of the data directory's file system; keeping the last reading", e);
            return;
        }
        admitted.set(0);
        usable = now;
        // Refusals keep the free space at the reserve, so they, not the reading, say when they began.
        boolean nowRefusing = refusedSinceCheck || now < reserve;
        refusedSinceCheck = false;
        if (nowRefusing && !refusing) {
            log.warn("the data directory's file system has {} bytes free, at --min-free-disk {}: writes are "
                    + "refused (503) until space is freed; reads go on", now, reserve);
        } else if (!nowRefusing && refusing) {
            log.info("the data directory's file system has {} bytes free and no write was refused since the last "
                    + "reading: writes are accepted", now);
        }
        refusing = nowRefusing;
    }

    /**
     * Whether {@code bytes} more may be written without going under the reserve; if so, they are
     * counted until the next {@link #check}.
     */
    public boolean tryWrite(long bytes) {
        if (reserve == 0) {
            return true;
        }
        long total = admitted.addAndGet(bytes);
        if (usable - total < reserve) {
            admitted.addAndGet(-bytes);
            refusedSinceCheck = true;
            return false;
        }
        return true;
    }

    /** Free bytes as of the last check, less what was admitted since. */
    public long usableBytes() {
        return reserve == 0 ? usableBytes.getAsLong() : usable - admitted.get();
    }

    public long reserve() {
        return reserve;
    }

    /** Why a write was refused, for its 503. */
    String refusal() {
        return "the data disk has " + Math.max(0, usableBytes()) + " bytes free, under --min-free-disk " + reserve
                + "; writes are refused until space is freed";
    }
}
