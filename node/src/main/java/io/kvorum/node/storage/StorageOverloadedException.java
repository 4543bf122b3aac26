package io.kvorum.node.storage;

import io.kvorum.node.error.OverloadedException;

/**
 * The storage queues are full: the operation was refused before it had any effect. The HTTP
 * gateway answers {@code 503} with {@code Retry-After}.
 */
public final class StorageOverloadedException extends OverloadedException {
    public StorageOverloadedException(String message) {
        super(message);
    }
}
