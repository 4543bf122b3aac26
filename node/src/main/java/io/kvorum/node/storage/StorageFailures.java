package io.kvorum.node.storage;

import io.kvorum.node.util.Failures;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.iq80.leveldb.DBException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reads and writes a LevelDB database failed (its own errors: a corrupt table, an I/O error; not
 * refusals for overload or a full disk), counted and logged so that an operator sees them without
 * being flooded; one for the records, one for the hints. LevelDB keeps failing every write once a
 * compaction has met a corrupt table, so a node under load would otherwise log hundreds of
 * thousands of stack traces a minute. The first failure of reads and the first of writes are
 * logged at once, with what to do; after that at most one line every {@value #SUMMARY_SECONDS} s
 * per kind, with how many failed meanwhile and the last error. LevelDB's messages name the fault,
 * and at most a file, never a key or a value.
 *
 * <p>Thread-safe: readers and the writer report concurrently.
 */
public final class StorageFailures {

    static final int SUMMARY_SECONDS = 60;
    private static final Logger log = LoggerFactory.getLogger(StorageFailures.class);

    /** The kinds of storage work that can fail. */
    public enum Op {
        READ("read"), WRITE("write");

        private final String label;

        Op(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** What failed so far, for {@code GET /v0/status}: counts since the start, the last error and when (epoch ms). */
    public record Summary(long reads, long writes, String last, long lastAt) {
    }

    private final String store;
    private final Counter reads;
    private final Counter writes;
    private final LongSupplier nanoTime;
    private final LongSupplier epochMillis;
    private final Kind readKind = new Kind(Op.READ);
    private final Kind writeKind = new Kind(Op.WRITE);
    private volatile String last;
    private volatile long lastAtMillis;

    /**
     * @param store  what the log calls the database ("storage", "hint store")
     * @param reads  where failed reads are counted
     * @param writes where failed writes are counted, each mutation of a failed batch
     */
    public StorageFailures(String store, Counter reads, Counter writes) {
        this(store, reads, writes, System::nanoTime, System::currentTimeMillis);
    }

    StorageFailures(String store, Counter reads, Counter writes, LongSupplier nanoTime, LongSupplier epochMillis) {
        this.store = store;
        this.reads = reads;
        this.writes = writes;
        this.nanoTime = nanoTime;
        this.epochMillis = epochMillis;
    }

    /**
     * {@code count} reads or writes failed with {@code error}; returns what to fail them with. When
     * the error is the database's own ({@link #isStoreFault}), counts and logs them and returns a
     * {@link Reported}, which callers need not log again; otherwise (a closed store at shutdown, a
     * bug) returns the error as it is.
     */
    public RuntimeException failed(Op op, int count, Throwable error) {
        if (!isStoreFault(error)) {
            return error instanceof RuntimeException r ? r : new StorageException(error.toString(), error);
        }
        String message = describe(error);
        last = op.label() + ": " + message;
        lastAtMillis = epochMillis.getAsLong();
        (op == Op.READ ? reads : writes).increment(count);
        (op == Op.READ ? readKind : writeKind).report(count, message);
        return new Reported(store + " " + op.label() + " failed: " + message, error);
    }

    /** A storage failure that {@link StorageFailures} has counted and logged already. */
    public static final class Reported extends StorageException {
        Reported(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Whether LevelDB or the disk failed (LevelDB's {@code DBException}, an I/O error, a record
     * whose bytes do not decode), as opposed to a store closed under its caller or a bug.
     */
    static boolean isStoreFault(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof DBException || t instanceof IOException || t instanceof RecordCodec.CorruptRecordException) {
                return true;
            }
        }
        return false;
    }

    /** The messages of the error and its causes, each once: LevelDB's own is often a cause's. */
    static String describe(Throwable error) {
        StringBuilder out = new StringBuilder();
        Throwable t = Failures.unwrap(error);
        for (int depth = 0; t != null && depth < 5; depth++, t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && out.indexOf(m) < 0) {
                out.append(out.length() == 0 ? "" : ": ").append(m);
            }
        }
        return out.length() == 0 ? Failures.unwrap(error).getClass().getName() : out.toString();
    }

    /** Null while nothing has failed. */
    public Summary summary() {
        long r = (long) reads.count();
        long w = (long) writes.count();
        return r == 0 && w == 0 ? null : new Summary(r, w, last, lastAtMillis);
    }

    /** The log of one kind: the first failure at once, then a summary at most every {@link #SUMMARY_SECONDS}. */
    private final class Kind {
        private final Op op;
        private boolean logged;
        private long loggedAtNanos;
        private long unlogged;

        Kind(Op op) {
            this.op = op;
        }

        synchronized void report(int count, String message) {
            long now = nanoTime.getAsLong();
            if (!logged) {
                logged = true;
                loggedAtNanos = now;
                log.error("{} {} failed: {}. Further failures are summed up here at most every {} s and counted "
                                + "by kvorum_storage_errors_total. A write that fails so keeps failing until the node "
                                + "restarts; for a corrupt file, see docs/operations.md, \"A corrupt data file\"",
                        store, op.label(), message, SUMMARY_SECONDS);
                return;
            }
            unlogged += count;
            if (now - loggedAtNanos >= TimeUnit.SECONDS.toNanos(SUMMARY_SECONDS)) {
                log.error("{} more {} {}s failed in the last {} s; the last: {}", unlogged, store, op.label(),
                        TimeUnit.NANOSECONDS.toSeconds(now - loggedAtNanos), message);
                unlogged = 0;
                loggedAtNanos = now;
            }
        }
    }
}
