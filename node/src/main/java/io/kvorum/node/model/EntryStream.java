package io.kvorum.node.model;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A pull-based, asynchronous stream of entries in ascending key order, read in batches so that
 * the consumer sets the pace (backpressure) and memory stays bounded by one batch.
 *
 * <p>Contract: call {@link #next()} again only after the previous future completed. An empty batch
 * means the end. {@link #close()} may be called from any thread at any time, is idempotent, and
 * releases what the stream holds (upstream calls) even if a batch is in flight.
 */
public interface EntryStream extends AutoCloseable {

    CompletableFuture<List<Entry>> next();

    @Override
    void close();
}
