package io.kvorum.node.liveness;

import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A peer's {@link RangeSource} whose every batch received counts as an answer of the peer in
 * {@link PeerLiveness}: a peer streaming a range is alive, whatever its heartbeats do. Failures
 * teach nothing here (a range's failure may be the client's going away). The futures handed out
 * are the peer stream's own, so cancelling one reaches the stream.
 */
public record ObservedRangeSource(String peer, RangeSource source, PeerLiveness liveness) implements RangeSource {

    @Override
    public EntryStream open(byte[] start, byte[] end) {
        EntryStream stream = source.open(start, end);
        return new EntryStream() {
            @Override
            public CompletableFuture<List<Entry>> next() {
                CompletableFuture<List<Entry>> batch = stream.next();
                batch.thenRun(() -> liveness.answered(peer, -1));
                return batch;
            }

            @Override
            public void close() {
                stream.close();
            }
        };
    }
}
