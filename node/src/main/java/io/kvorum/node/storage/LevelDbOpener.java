package io.kvorum.node.storage;

import static org.fusesource.leveldbjni.JniDBFactory.factory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.Options;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place that opens a LevelDB database, so that every database of the node (records,
 * hints) gets the same options: created if missing, paranoid checks (a corrupt file fails the open
 * rather than being read) except to recover from a torn log tail ({@link LevelDbLogScan}), Snappy
 * compression. Callers
 * choose only the memory it may use. A directory that holds LevelDB's files but lost its
 * {@code CURRENT} is refused ({@link DamagedStoreException}): LevelDB would create a new, empty
 * database there and delete the old tables as obsolete.
 */
public final class LevelDbOpener {

    private static final Logger log = LoggerFactory.getLogger(LevelDbOpener.class);

    /** The file that names the manifest in use; LevelDB creates a new, empty database where it is missing. */
    static final String CURRENT = "CURRENT";
    /** LevelDB's data files: NUMBER.log, NUMBER.sst (or .ldb) and MANIFEST-NUMBER. */
    private static final Pattern DATA_FILE = Pattern.compile("\\d+\\.(log|sst|ldb)|MANIFEST-\\d+");

    private LevelDbOpener() {
    }

    /** Whether {@code dir} holds a LevelDB data file (a log, a table or a manifest); false if it does not exist. */
    static boolean holdsDataFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return false;
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.anyMatch(f -> DATA_FILE.matcher(f.getFileName().toString()).matches());
        }
    }

    /**
     * Opens (creating it and its directory if needed) the database in {@code dir}. The caller owns
     * the result and must close it.
     *
     * @param cacheBytes       LevelDB's block cache
     * @param writeBufferBytes how much is written to the log before a new table is made
     */
    public static DB open(Path dir, long cacheBytes, int writeBufferBytes) throws IOException {
        Files.createDirectories(dir);
        if (!Files.exists(dir.resolve(CURRENT)) && holdsDataFiles(dir)) {
            throw new DamagedStoreException(dir + " holds LevelDB tables or logs but no " + CURRENT + " file, which names "
                    + "its manifest: opened as it is, it would start empty and LevelDB would delete them");
        }
        Options options = new Options()
                .createIfMissing(true)
                .paranoidChecks(true)
                .compressionType(CompressionType.SNAPPY)
                .cacheSize(cacheBytes)
                .writeBufferSize(writeBufferBytes);
        try {
            return factory.open(dir.toFile(), options);
        } catch (IOException e) {
            if (e.getMessage() == null || !e.getMessage().contains("Corruption")) {
                throw e;
            }
            // LevelDB appends its log through a memory map: a process killed in the middle of a
            // write leaves a torn last record, which paranoid checks refuse. That write never
            // returned, so it was never acknowledged; recovery without them drops it and keeps the
            // rest. Damage with whole records after it is not that: recovery would drop
            // acknowledged writes, so the store is refused, to be salvaged knowingly.
            String damage = LevelDbLogScan.damageBeforeTheEnd(dir);
            if (damage != null) {
                throw new DamagedStoreException(dir + ": " + e.getMessage() + "; " + damage
                        + ", so this is not a write cut short by a kill: opening it would drop acknowledged writes");
            }
            log.warn("{}: {}; opening it again without paranoid checks, which drops a torn record at the end of "
                    + "its log (a write cut short when the process was killed)", dir, e.getMessage());
            return factory.open(dir.toFile(), options.paranoidChecks(false));
        }
    }
}
