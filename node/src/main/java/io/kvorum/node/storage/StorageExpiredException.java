package io.kvorum.node.storage;

/**
 * A read or write was dropped before the store saw it: it waited for a storage thread longer than
 * the request timeout, by which time whoever asked had stopped waiting for it. It had no effect.
 */
public final class StorageExpiredException extends RuntimeException {

    private StorageExpiredException(String message) {
        super(message, null, false, false);
    }

    public static StorageExpiredException read(long waitedMillis) {
        return new StorageExpiredException("the read waited " + waitedMillis
                + " ms for a storage reader, past the request timeout; dropped unread");
    }

    public static StorageExpiredException write(long waitedMillis) {
        return new StorageExpiredException("the write waited " + waitedMillis
                + " ms for the storage writer, past the request timeout; dropped without effect");
    }
}
