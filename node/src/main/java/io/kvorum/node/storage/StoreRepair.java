package io.kvorum.node.storage;

import static org.fusesource.leveldbjni.JniDBFactory.factory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.Options;

/**
 * Salvages a node's store after LevelDB found a file of it corrupt, with the node stopped: LevelDB's
 * own repair reads every table and log it can, drops what it cannot (the damaged blocks, and with
 * them their records; it keeps the damaged files under {@code lost/}) and writes a new manifest.
 * The anti-entropy index ({@link BucketIndex}) is then marked incomplete, since entries of lost
 * records may have survived the records: the node builds it again from the records when it next
 * starts, so that its trees show what it lost and a round (or {@code POST /v0/repair}) fetches
 * those records from its peers.
 *
 * <p>A database in use is not touched: LevelDB's repair does not take the lock that a running node
 * holds, so this checks it first and holds it while LevelDB repairs. A store that lost its
 * {@code CURRENT} or its manifest is repaired too: LevelDB rebuilds them from the tables and logs.
 */
public final class StoreRepair {

    /** What a repair did: the tables it set aside (in {@code database/lost}), and the records it can read now. */
    public record Outcome(Path database, List<String> tablesSetAside, long records) {
    }

    private StoreRepair() {
    }

    /**
     * Repairs the records database in {@code dataDir}.
     *
     * @throws IOException when there is no database there, it is in use, or LevelDB cannot repair it
     */
    public static Outcome repair(Path dataDir) throws IOException {
        Path records = dataDir.resolve("records");
        if (!Files.isRegularFile(records.resolve(LevelDbOpener.CURRENT)) && !LevelDbOpener.holdsDataFiles(records)) {
            throw new IOException("no Kvorum store in " + dataDir + " (" + records + " holds no LevelDB files)");
        }
        Options options = new Options().createIfMissing(false).paranoidChecks(false);
        refuseIfInUse(records, options);
        Set<String> lostBefore = tables(records.resolve("lost"));
        // LevelDB's repair takes no lock: this one keeps a node from starting on the store meanwhile.
        try (FileChannel lockFile = FileChannel.open(records.resolve("LOCK"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock lock = lockFile.tryLock()) {
            if (lock == null) {
                throw inUse();
            }
            factory.repair(records.toFile(), options);
        }
        // The timestamp ceiling's latest version may have been in a table set aside while records it
        // covered survived with an older version of it: the open below scans the records for it instead.
        try (DB db = factory.open(records.toFile(), options)) {
            StoredTimestampCeiling.forget(db);
        }
        List<String> setAside = tables(records.resolve("lost")).stream().filter(t -> !lostBefore.contains(t))
                .sorted().toList();
        // Opened without its index, a store loses its mark of a complete index.
        try (LevelDbStore store = LevelDbStore.open(records, false, 8 << 20, false);
             LevelDbStore.Cursor cursor = store.cursor(new byte[0], null)) {
            long n = 0;
            for (var batch = cursor.next(4096, 4 << 20); !batch.isEmpty(); batch = cursor.next(4096, 4 << 20)) {
                n += batch.size();
            }
            return new Outcome(records, setAside, n);
        }
    }

    /**
     * Fails if a process (a running node) holds the store: LevelDB checks its lock before anything
     * else when it opens a database. Any other failure to open is the damage a repair is for (a
     * missing or damaged {@code CURRENT} or manifest); a corrupt table does not stop an open
     * without paranoid checks.
     */
    private static void refuseIfInUse(Path records, Options options) throws IOException {
        try {
            factory.open(records.toFile(), options).close();
        } catch (IOException e) {
            if (String.valueOf(e.getMessage()).startsWith("IO error: lock ")) {
                throw inUse();
            }
        }
    }

    private static IOException inUse() {
        return new IOException("the store is in use: a running node holds its lock; stop the node first");
    }

    /** The tables in {@code dir}, by file name; none if it does not exist. */
    private static Set<String> tables(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return Set.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(name -> name.endsWith(".sst"))
                    .collect(Collectors.toSet());
        }
    }
}
