package io.kvorum.node.storage;

import java.io.IOException;

/**
 * A LevelDB store that cannot be opened as it is without losing what it holds: LevelDB would start
 * it empty and delete its files. {@code kvorum repair-storage} rebuilds it from what it can read.
 */
public final class DamagedStoreException extends IOException {
    public DamagedStoreException(String message) {
        super(message);
    }
}
