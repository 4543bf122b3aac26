package io.kvorum.perf.peers;

import java.util.concurrent.CompletableFuture;

/**
 * One system's client as {@code perf peers} drives it: asynchronous writes and reads of whole
 * values by key, each completing when the system has answered (exceptionally for an error or a
 * timeout). Implementations are thread-safe; a read of a missing key is an answer, not an error.
 */
public interface KeyValueTarget extends AutoCloseable {

    CompletableFuture<?> put(byte[] key, byte[] value);

    CompletableFuture<?> get(byte[] key);

    /** Closes the client's connections; requests still in flight fail. */
    @Override
    void close();
}
