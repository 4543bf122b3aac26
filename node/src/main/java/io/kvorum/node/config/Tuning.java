package io.kvorum.node.config;

import io.kvorum.node.util.ProcessMemory;
import java.time.Duration;

/**
 * The node's internal tuning: sizes, intervals and time limits that an operator has no reason to
 * set, so they are not {@link NodeOption}s. They are built in one place, {@link #DEFAULTS}; tests
 * may start a node with other values ({@link NodeConfig#withTuning}).
 *
 * @param shutdownGrace          how long a graceful stop waits for HTTP requests in progress
 * @param executorStopWait       how long a stop waits for each background executor (anti-entropy,
 *                               expiry purge) to end before it gives up on it; storage is closed only
 *                               once every reader has ended
 * @param announceWait           how long a starting node waits for its peers to answer its
 *                               announcement before it serves anyway
 * @param storageCacheBytes      LevelDB's block cache for the records
 * @param rangeBatchEntries      entries per batch of a range scan
 * @param rangeBatchBytes        bytes per batch of a range scan (one entry may exceed it)
 * @param antiEntropyIdleTimeout how long an anti-entropy round waits for its peer (e.g. to build its
 *                               tree) before it fails
 * @param hints                  hinted handoff
 * @param liveness               heartbeats
 * @param grpc                   the gRPC peer transport
 * @param changes                membership changes
 */
public record Tuning(
        Duration shutdownGrace,
        Duration executorStopWait,
        Duration announceWait,
        long storageCacheBytes,
        int rangeBatchEntries,
        int rangeBatchBytes,
        Duration antiEntropyIdleTimeout,
        Hints hints,
        Liveness liveness,
        Grpc grpc,
        Changes changes) {

    /**
     * @param proposalTimeout  how long a change coordinator waits for one member to adopt an epoch,
     *                         and a node for a peer's membership
     * @param changeDeadline   how long a member waits for the change coordinator to answer a change
     *                         (it proposes an epoch to every member meanwhile)
     * @param recordsPerSecond the pace at which a joining node takes in records (docs/operations.md#growing-and-shrinking-a-cluster: streaming is
     *                         background work and must not crowd out requests)
     * @param retryInterval    how long a joining node waits before it retries a step that failed
     */
    public record Changes(Duration proposalTimeout, Duration changeDeadline, int recordsPerSecond,
                          Duration retryInterval) {
    }

    /**
     * @param checkInterval how often peers with hints are tried: well within the 5 s of docs/operations.md#hinted-handoff from a
     *                      peer's return to delivery
     * @param window        hints in flight to one peer at once
     * @param windowBytes   bytes of hints in flight to one peer at once (at least one hint)
     * @param queueBytes    bytes of hints waiting for the hint writer
     */
    public record Hints(Duration checkInterval, int window, long windowBytes, long queueBytes) {
    }

    /**
     * How peers are watched; with {@code --phi-convict-threshold} 8, a frozen peer that answered
     * every heartbeat in about the same time is suspected about 3 s after its last answer
     * ({@code heartbeatInterval + acceptablePause + 5.2 * minStdDeviation}), well within the 5 s of
     * docs/operations.md#how-peers-notice-each-other; one whose answers came irregularly, later.
     *
     * @param heartbeatInterval how often each peer is pinged
     * @param acceptablePause   added to the mean interval between a peer's heartbeat answers before
     *                          phi is computed: one lost heartbeat alone is not suspicious
     * @param minStdDeviation   the least deviation of those intervals the detector assumes
     */
    public record Liveness(Duration heartbeatInterval, Duration acceptablePause, Duration minStdDeviation) {
    }

    /**
     * @param messageOverheadBytes        headroom over the largest value for the rest of a message
     *                                    (key, header, record fields)
     * @param maxInFlightPerPeer          replica requests in flight to one peer
     * @param maxInFlightBytesPerPeer     bytes of replica requests in flight to one peer (at least four
     *                                    of the largest messages)
     * @param unsentAnswerBytes           bytes of answers to peers' replica requests not yet sent, over
     *                                    all peers (at least four of the largest messages); past it a
     *                                    read is answered {@code OVERLOADED}
     *                                    (docs/architecture.md#limits-of-the-peer-port)
     * @param rangeMessageBytes           range scan messages end past this size (plus one entry, which
     *                                    {@code messageOverheadBytes} allows for)
     * @param antiEntropyRoundDeadline    the deadline of one anti-entropy round (the idle timeout of
     *                                    each wait is far shorter)
     * @param pingTimeout                 how long a heartbeat waits for its answer (an announcement
     *                                    waits twice as long)
     * @param connectionsPerAddress       connections to the gRPC port one remote address may hold open
     *                                    at once (docs/architecture.md#limits-of-the-peer-port)
     * @param connectionIdle              a connection to the gRPC port with no call for this long is
     *                                    closed (gracefully: a client reconnects on its next call)
     */
    public record Grpc(int messageOverheadBytes, int maxInFlightPerPeer, long maxInFlightBytesPerPeer,
                       long unsentAnswerBytes, int rangeMessageBytes, Duration antiEntropyRoundDeadline,
                       Duration pingTimeout, int connectionsPerAddress, Duration connectionIdle) {
    }

    /**
     * The values every node runs with. The bounds on values held in memory on their way elsewhere
     * (hints waiting for the hint writer, replica calls awaiting their answer) are the smaller of a
     * fixed size and a share of the node's memory ({@link ProcessMemory}): fixed, a node with a
     * 128 MiB heap would let them hold several times its heap.
     */
    public static final Tuning DEFAULTS = new Tuning(
            Duration.ofSeconds(5),
            Duration.ofSeconds(2),
            Duration.ofSeconds(3),
            64L << 20,
            256,
            256 * 1024,
            Duration.ofSeconds(60),
            new Hints(Duration.ofMillis(250), 64, 4L << 20, memoryShare(64L << 20, 16)),
            new Liveness(Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofMillis(200)),
            new Grpc(64 * 1024, 8192, memoryShare(256L << 20, 8), memoryShare(256L << 20, 8), 32 * 1024,
                    Duration.ofHours(1), Duration.ofSeconds(1), 64, Duration.ofMinutes(1)),
            new Changes(Duration.ofSeconds(3), Duration.ofSeconds(15), 20_000, Duration.ofSeconds(1)));

    /** {@code most}, or a {@code divisor}th of the node's memory when that is smaller. */
    static long memoryShare(long most, int divisor) {
        return Math.min(most, ProcessMemory.smallerOfHeapAndDirect() / divisor);
    }
}
