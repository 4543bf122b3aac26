package io.kvorum.node.storage;

import static org.fusesource.leveldbjni.JniDBFactory.factory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.Options;

/**
 * The one place that opens a LevelDB database, so that every database of the node (records,
 * hints) gets the same options: created if missing, paranoid checks (a corrupt file fails the open
 * rather than being read), Snappy compression. Callers choose only the memory it may use.
 */
public final class LevelDbOpener {

    private LevelDbOpener() {
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
        Options options = new Options()
                .createIfMissing(true)
                .paranoidChecks(true)
                .compressionType(CompressionType.SNAPPY)
                .cacheSize(cacheBytes)
                .writeBufferSize(writeBufferBytes);
        return factory.open(dir.toFile(), options);
    }
}
