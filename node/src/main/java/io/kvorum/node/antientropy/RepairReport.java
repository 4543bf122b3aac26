package io.kvorum.node.antientropy;

import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The outcome of one anti-entropy run with every peer: the rounds that completed, and the peers
 * whose round failed, with why.
 *
 * @param rounds     completed rounds, by peer id
 * @param failed     peer id to what went wrong, for the peers whose round failed
 * @param durationMs the whole run
 */
public record RepairReport(List<RoundStats> rounds, SortedMap<String, String> failed, long durationMs) {

    public RepairReport {
        rounds = List.copyOf(rounds);
        failed = new TreeMap<>(failed);
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

    public long recordsSent() {
        return rounds.stream().mapToLong(RoundStats::recordsSent).sum();
    }

    public long recordsReceived() {
        return rounds.stream().mapToLong(RoundStats::recordsReceived).sum();
    }

    /**
     * The summary {@code POST /v0/repair} answers: {@code peers} (completed rounds), {@code unreachable},
     * then the sums over the completed rounds and the duration.
     */
    public String toJson() {
        return "{\"peers\":" + jsonList(rounds.stream().map(RoundStats::peer).toList())
                + ",\"unreachable\":" + jsonList(List.copyOf(failed.keySet()))
                + ",\"bucketsCompared\":" + rounds.stream().mapToLong(RoundStats::bucketsCompared).sum()
                + ",\"bucketsDiffering\":" + rounds.stream().mapToLong(RoundStats::bucketsDiffering).sum()
                + ",\"recordsSent\":" + recordsSent()
                + ",\"recordsReceived\":" + recordsReceived()
                + ",\"bytesSent\":" + rounds.stream().mapToLong(RoundStats::bytesSent).sum()
                + ",\"bytesReceived\":" + rounds.stream().mapToLong(RoundStats::bytesReceived).sum()
                + ",\"durationMs\":" + durationMs + "}";
    }

    /** One line for the log and for a 504: who failed and why. */
    public String failures() {
        return failed.entrySet().stream().map(e -> e.getKey() + " (" + e.getValue() + ")")
                .collect(Collectors.joining(", "));
    }

    /** Node ids are letters, digits, '_', '.', '-' (see Topology), so they need no escaping. */
    private static String jsonList(List<String> ids) {
        return ids.stream().map(id -> "\"" + id + "\"").collect(Collectors.joining(",", "[", "]"));
    }
}
