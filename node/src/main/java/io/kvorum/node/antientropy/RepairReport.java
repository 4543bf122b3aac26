package io.kvorum.node.antientropy;

import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/**
 * The outcome of one anti-entropy run with every peer: the rounds that completed, and the peers
 * whose round failed, with why.
 *
 * @param rounds     completed rounds, by peer id
 * @param failed     peer id to what went wrong, for the peers whose round failed
 * @param durationMs the whole run
 * @param trees      the state of this node's maintained trees when the run ended (see
 *                   {@link AntiEntropyState#trees}); null when not known
 */
public record RepairReport(List<RoundStats> rounds, SortedMap<String, String> failed, long durationMs, String trees) {

    public RepairReport {
        rounds = List.copyOf(rounds);
        failed = new TreeMap<>(failed);
    }

    public RepairReport(List<RoundStats> rounds, SortedMap<String, String> failed, long durationMs) {
        this(rounds, failed, durationMs, null);
    }

    /** Whether every peer was reached and its round completed. */
    public boolean isComplete() {
        return failed.isEmpty();
    }

    /** This report, or {@link RepairIncompleteException} naming the peers that could not be reached. */
    public RepairReport requireComplete() {
        if (!isComplete()) {
            throw new RepairIncompleteException(this);
        }
        return this;
    }

    /** Summed over the completed rounds, as the other counts below. */
    public long recordsSent() {
        return sum(RoundStats::recordsSent);
    }

    public long recordsReceived() {
        return sum(RoundStats::recordsReceived);
    }

    /** The peers whose round completed, in the order the rounds ran. */
    public List<String> peers() {
        return rounds.stream().map(RoundStats::peer).toList();
    }

    public long bucketsCompared() {
        return sum(RoundStats::bucketsCompared);
    }

    public long bucketsDiffering() {
        return sum(RoundStats::bucketsDiffering);
    }

    public long bytesSent() {
        return sum(RoundStats::bytesSent);
    }

    public long bytesReceived() {
        return sum(RoundStats::bytesReceived);
    }

    private long sum(ToLongFunction<RoundStats> field) {
        return rounds.stream().mapToLong(field).sum();
    }

    /** For the log: what the summary of {@code POST /v0/repair} says, sums over the completed rounds. */
    @Override
    public String toString() {
        return "peers " + peers() + ", unreachable " + failed.keySet() + ", buckets compared " + bucketsCompared()
                + " (differing " + bucketsDiffering() + "), records sent " + recordsSent() + " received "
                + recordsReceived() + ", bytes sent " + bytesSent() + " received " + bytesReceived() + ", "
                + durationMs + " ms";
    }

    /** One line for the log and for a 504: who failed and why. */
    public String failures() {
        return failed.entrySet().stream().map(e -> e.getKey() + " (" + e.getValue() + ")")
                .collect(Collectors.joining(", "));
    }
}
