package io.kvorum.node.storage;

import java.io.IOException;
import java.nio.file.FileSystemException;

/**
 * A LevelDB store that cannot be opened as it is without losing what it holds: LevelDB would start
 * it empty and delete its files. {@code kvorum repair-storage} rebuilds it from what it can read.
 */
public final class DamagedStoreException extends IOException {
    public DamagedStoreException(String message) {
        super(message);
    }

    /**
     * Whether opening a store failed for damage to its files (this refusal, a corrupt file, a lost
     * or unreadable manifest) rather than for the file system or a lock: what a repair, or for
     * hints a deletion, recovers from.
     */
    public static boolean isDamage(IOException e) {
        String message = String.valueOf(e.getMessage());
        return e instanceof DamagedStoreException || (!(e instanceof FileSystemException)
                && (message.startsWith("Corruption") || message.contains("MANIFEST") || message.contains("CURRENT")));
    }
}
