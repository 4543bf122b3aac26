package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import java.util.concurrent.CompletableFuture;

/** What tests in other packages may do to storage that production code outside it may not. */
public final class StorageTestAccess {

    private StorageTestAccess() {
    }

    /** {@link StorageService#purge}, as the expiry purger does it. */
    public static CompletableFuture<Boolean> purge(StorageService storage, byte[] key, Record expected,
                                                   Record replacement) {
        return storage.purge(key, expected, replacement);
    }
}
