package io.kvorum.client;

import io.kvorum.client.KvorumClient.Options;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The blocking view of a {@link KvorumClient} ({@link KvorumClient#sync()}): each method sends the
 * same request as its asynchronous counterpart and waits for it, at most the call's deadline.
 * Refusals throw the {@link KvorumException} subclasses, unchecked; connection failures and
 * timeouts the checked {@link IOException}s the futures would carry; an interrupt
 * {@link InterruptedIOException}. Calling it on one of the client's event loops (from a callback)
 * throws {@link IllegalStateException}, as it could never complete there.
 */
public final class BlockingKvorumClient {

    private final KvorumClient client;

    BlockingKvorumClient(KvorumClient client) {
        this.client = client;
    }

    public Optional<byte[]> get(String key) throws IOException {
        return await(client, client.get(key));
    }

    public Optional<byte[]> get(String key, Options options) throws IOException {
        return await(client, client.get(key, options));
    }

    public Optional<byte[]> get(byte[] key, Options options) throws IOException {
        return await(client, client.get(key, options));
    }

    public void put(String key, byte[] value) throws IOException {
        await(client, client.put(key, value));
    }

    public void put(String key, byte[] value, Options options) throws IOException {
        await(client, client.put(key, value, options));
    }

    public void put(byte[] key, byte[] value, Options options) throws IOException {
        await(client, client.put(key, value, options));
    }

    public void delete(String key) throws IOException {
        await(client, client.delete(key));
    }

    public void delete(String key, Options options) throws IOException {
        await(client, client.delete(key, options));
    }

    public void delete(byte[] key, Options options) throws IOException {
        await(client, client.delete(key, options));
    }

    /** {@link KvorumClient#range}, which blocks already: here so that this view has every call. */
    public RangeReader range(String start, String end) throws IOException {
        return client.range(start, end);
    }

    public RangeReader range(String start, String end, Duration timeout) throws IOException {
        return client.range(start, end, timeout);
    }

    public io.kvorum.client.placement.ClusterView cluster() throws IOException {
        return await(client, client.cluster());
    }

    public boolean isReady() throws IOException {
        return await(client, client.isReady());
    }

    /** The call's deadline bounds the wait: its timer completes the future. */
    static <T> T await(KvorumClient client, CompletableFuture<T> future) throws IOException {
        if (client.inEventLoop()) {
            throw new IllegalStateException("a blocking call on the client's event loop would never complete");
        }
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a Kvorum call");
        } catch (ExecutionException e) {
            throw Call.rethrow(Call.unwrap(e));
        }
    }
}
