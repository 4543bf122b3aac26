package io.kvorum.node.storage;

/** The storage engine failed; the operation had no effect or an unknown one. */
public class StorageException extends RuntimeException {
    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
