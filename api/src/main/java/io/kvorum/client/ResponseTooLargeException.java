package io.kvorum.client;

import java.io.IOException;

/**
 * A node's answer was larger than the client accepts ({@link KvorumClient.Builder#maxResponseBytes}):
 * the call failed without being retried, since the answer would be as large again. Raise the bound
 * to read such values.
 */
public final class ResponseTooLargeException extends IOException {

    public ResponseTooLargeException(String message, Throwable cause) {
        super(message, cause);
    }
}
