package io.kvorum.node.http;

import io.kvorum.node.backup.BackupFileReader;
import io.kvorum.node.coordinator.Coordinator;
import io.kvorum.node.coordinator.Quorum;
import io.kvorum.node.model.Entry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code POST /v0/restore} (docs/http-api.md#post-v0restore): the restore tool's intake. The body is
 * a batch of records in the encoding of a backup data file, uncompressed ({@code KVB1}, entries,
 * {@code int -1}, the entry count). The whole batch is decoded and checked before any record of it
 * is written, so a malformed one (400) has no effect; then each record goes to its key's replicas
 * through {@link Coordinator#restore}, at most {@value #IN_FLIGHT} at a time, and the batch succeeds
 * once every record was stored by a quorum of its replicas.
 */
final class RestoreIntake {

    /** The records of one batch written at once: a batch does not flood the replicas' queues. */
    static final int IN_FLIGHT = 32;

    private RestoreIntake() {
    }

    /** The batch's entries, or a {@link BadRequestException} saying what is wrong with it. */
    static List<Entry> decode(ByteBuf body) {
        List<Entry> entries = new ArrayList<>();
        try (BackupFileReader reader = BackupFileReader.plain(new ByteBufInputStream(body.duplicate()), "the batch")) {
            for (Entry e = reader.next(); e != null; e = reader.next()) {
                if (e.key().length > RequestParams.MAX_KEY_BYTES) {
                    throw new IOException("entry " + entries.size() + " has a key of " + e.key().length
                            + " bytes, over the limit of " + RequestParams.MAX_KEY_BYTES);
                }
                entries.add(e);
            }
        } catch (IOException e) {
            throw new BadRequestException("not a batch of backup entries (docs/http-api.md): "
                    + (e.getMessage() != null ? e.getMessage() : "it ends before its end marker"));
        }
        return entries;
    }

    /**
     * Writes every entry, {@value #IN_FLIGHT} at a time; completes with their number, or with the
     * first failure (after which no more are started).
     */
    static CompletableFuture<Integer> load(Coordinator coordinator, List<Entry> entries, Quorum quorum) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger lanesLeft = new AtomicInteger(Math.min(IN_FLIGHT, entries.size()));
        if (entries.isEmpty()) {
            done.complete(0);
        }
        for (int lane = 0; lane < Math.min(IN_FLIGHT, entries.size()); lane++) {
            runLane(coordinator, entries, quorum, next, lanesLeft, done);
        }
        return done;
    }

    /**
     * Takes the next entry and writes it, then the next once that one was written, until none is
     * left or one failed. An entry written at once is followed in a loop, not from its callback, so
     * the stack does not grow with the batch.
     */
    private static void runLane(Coordinator coordinator, List<Entry> entries, Quorum quorum, AtomicInteger next,
                                AtomicInteger lanesLeft, CompletableFuture<Integer> done) {
        while (!done.isDone()) {
            int i = next.getAndIncrement();
            if (i >= entries.size()) {
                if (lanesLeft.decrementAndGet() == 0) {
                    done.complete(entries.size());
                }
                return;
            }
            Entry entry = entries.get(i);
            CompletableFuture<?> written;
            try {
                written = coordinator.restore(entry.key(), entry.record(), quorum);
            } catch (RuntimeException e) { // from a callback, it would leave the batch unanswered
                done.completeExceptionally(e);
                return;
            }
            if (!written.isDone()) {
                written.whenComplete((ok, error) -> {
                    if (error != null) {
                        done.completeExceptionally(error);
                    } else {
                        runLane(coordinator, entries, quorum, next, lanesLeft, done);
                    }
                });
                return;
            }
            if (written.isCompletedExceptionally()) {
                written.whenComplete((ok, error) -> done.completeExceptionally(error));
                return;
            }
        }
    }
}
