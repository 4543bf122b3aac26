package io.kvorum.node.storage;

import io.kvorum.node.model.Entry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ceiling over the timestamp of every record in the store, persisted across restarts, so that
 * the writer can tell a write that is newer than anything stored without reading the key first.
 *
 * <p>Why: {@link LevelDbStore#apply} keeps a put only if it is newer than the stored version, and
 * reading that version was most of the writer thread's work. But a coordinator stamps writes with
 * its hybrid logical clock, which runs ahead of every timestamp it has seen, so almost every put
 * carries a timestamp above everything already stored; for those the read can only say "older".
 *
 * <p>Contract (timestamps compare unsigned, as {@link Record#compareVersions} does): every stored
 * record has a timestamp {@code <=} {@link #newest()}. In memory that bound is exact for what was
 * written since opening. Across restarts it comes from a file, {@value #FILE_NAME}, holding a
 * value that every timestamp ever written is below: before a batch with a timestamp at or past it
 * is written, the file is raised to that timestamp plus {@link #HEADROOM} and fsynced. So the file
 * is rewritten about once a {@code HEADROOM} of clock time, and after a restart the first
 * {@code HEADROOM} of writes read before writing, as every write used to. With no readable file
 * (a store from before this class, or a damaged file) the bound is found by scanning the store
 * once.
 *
 * <p>Threading: the writer thread only, like {@link LevelDbStore#apply}.
 */
final class StoredTimestampCeiling {

    private static final Logger log = LoggerFactory.getLogger(StoredTimestampCeiling.class);

    /** In the LevelDB directory; LevelDB leaves files whose names it does not use alone. */
    static final String FILE_NAME = "KVORUM-TIMESTAMP-BOUND";
    /** One minute of physical clock in the HLC encoding (48 bits of milliseconds, 16 of counter). */
    static final long HEADROOM = 60_000L << 16;

    private final Path file;
    private long newest;
    private long persisted;

    private StoredTimestampCeiling(Path file, long newest, long persisted) {
        this.file = file;
        this.newest = newest;
        this.persisted = persisted;
    }

    /**
     * Reads the bound of the store in {@code dir}, or, when there is no readable one, computes it
     * with {@code scanNewest} (the largest stored timestamp, 0 when the store is empty) and persists it.
     */
    static StoredTimestampCeiling open(Path dir, LongSupplier scanNewest) throws IOException {
        Path file = dir.resolve(FILE_NAME);
        Long stored = read(file);
        if (stored != null) {
            return new StoredTimestampCeiling(file, stored, stored);
        }
        long newest = scanNewest.getAsLong();
        StoredTimestampCeiling bound = new StoredTimestampCeiling(file, newest, 0);
        bound.persist(newest);
        return bound;
    }

    /** The largest timestamp (unsigned) of the records {@code batches} gives (empty at the end); 0 for none. */
    static long newest(Supplier<List<Entry>> batches) {
        long newest = 0;
        for (List<Entry> batch = batches.get(); !batch.isEmpty(); batch = batches.get()) {
            for (Entry e : batch) {
                if (Long.compareUnsigned(e.record().timestamp(), newest) > 0) {
                    newest = e.record().timestamp();
                }
            }
        }
        return newest;
    }

    /** Every stored record's timestamp is at most this (unsigned). */
    long newest() {
        return newest;
    }

    /** Whether a record with this timestamp is newer than every stored record, whatever its writer. */
    boolean isAboveAllStored(long timestamp) {
        return Long.compareUnsigned(timestamp, newest) > 0;
    }

    /** Call before writing a batch whose largest timestamp is {@code batchNewest}; may fsync a file. */
    void beforeWrite(long batchNewest) throws IOException {
        if (Long.compareUnsigned(batchNewest, persisted) >= 0) {
            persist(batchNewest);
        }
    }

    /** Call once a batch whose largest timestamp is {@code batchNewest} was written (or may have been). */
    void afterWrite(long batchNewest) {
        if (Long.compareUnsigned(batchNewest, newest) > 0) {
            newest = batchNewest;
        }
    }

    private void persist(long atLeast) throws IOException {
        long value = atLeast + HEADROOM;
        if (Long.compareUnsigned(value, atLeast) < 0) {
            value = -1L; // unsigned overflow: the largest timestamp there is
        }
        Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
        try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            out.write(ByteBuffer.wrap((Long.toUnsignedString(value) + "\n").getBytes(StandardCharsets.US_ASCII)));
            out.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dirChannel = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dirChannel.force(true); // the rename itself survives power loss
        }
        persisted = value;
    }

    /** The persisted bound, or null when the file is missing or unreadable. */
    private static Long read(Path file) {
        if (!Files.exists(file)) {
            return null;
        }
        try {
            return Long.parseUnsignedLong(Files.readString(file, StandardCharsets.US_ASCII).trim());
        } catch (IOException | NumberFormatException e) {
            log.warn("{} is unreadable ({}); scanning the store for its newest timestamp instead", file, e.toString());
            return null;
        }
    }
}
