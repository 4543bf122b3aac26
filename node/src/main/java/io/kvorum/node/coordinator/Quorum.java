package io.kvorum.node.coordinator;

/**
 * How many replicas a request asks ({@code from}) and how many must answer for it to succeed
 * ({@code ack}). Validated by the HTTP layer against the cluster size: 1 <= ack <= from <= N.
 */
public record Quorum(int ack, int from) {

    public Quorum {
        if (ack < 1 || ack > from) {
            throw new IllegalArgumentException("need 1 <= ack <= from, got " + ack + "/" + from);
        }
    }

    /** The default ack for a given from: a majority (1/1, 2/2, 2/3, 3/4, 3/5). */
    public static Quorum majorityOf(int from) {
        return new Quorum(from / 2 + 1, from);
    }
}
