package io.kvorum.node.coordinator;

import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.time.TimestampAheadException;
import io.kvorum.node.util.LogRateLimit;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's own storage as a {@link Replica}: served in-process, never through the network.
 *
 * @param hlc moves past the timestamp of every record written here, whoever coordinated it
 */
public record LocalReplica(String nodeId, StorageService storage, HybridLogicalClock hlc) implements Replica {

    private static final Logger log = LoggerFactory.getLogger(LocalReplica.class);
    private static final LogRateLimit REFUSALS = new LogRateLimit(Duration.ofMinutes(1));

    @Override
    public CompletableFuture<Record> read(byte[] key) {
        return storage.read(key);
    }

    /** The value is hashed as the read completes, on a storage reader thread as a rule. */
    @Override
    public CompletableFuture<RecordDigest> readDigest(byte[] key) {
        return storage.read(key).thenApply(RecordDigest::of);
    }

    /**
     * Stores the record, moving the clock past it first unless it is further ahead of this node's
     * wall clock than {@code --max-clock-offset}: a write this node coordinates, or a record a join
     * or anti-entropy brings, is stored whatever its timestamp, but never drags the clock forward.
     */
    @Override
    public CompletableFuture<Boolean> write(byte[] key, Record record) {
        hlc.observeFromPeer(record.timestamp());
        return storage.write(key, record);
    }

    /**
     * A record a peer sent: one stamped further ahead of this node's wall clock than
     * {@code --max-clock-offset} is refused with a {@link TimestampAheadException} and logged, at
     * most once a minute per writer (docs/operations.md#clocks), whoever it names as its writer.
     */
    @Override
    public CompletableFuture<Boolean> writeFromPeer(byte[] key, Record record) {
        if (!hlc.observeFromPeer(record.timestamp())) {
            long ahead = hlc.aheadOfWallClockMillis(record.timestamp());
            if (REFUSALS.admit(record.writer())) {
                log.warn("refused records stamped by {} {} ms ahead of this node's clock, more than --max-clock-offset: "
                        + "one of the two clocks is wrong (check their time sources)", record.writer(), ahead);
            }
            return CompletableFuture.failedFuture(new TimestampAheadException(nodeId + " refused a record stamped "
                    + ahead + " ms ahead of its clock, more than --max-clock-offset"));
        }
        return storage.write(key, record);
    }
}
