package io.kvorum.node.antientropy;

import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What an operator sees of a node's anti-entropy ({@code /v0/status}, {@code POST /v0/repair}):
 * the state of its maintained trees and the last round it ran with each peer.
 *
 * @param trees      "ready" once every leaf was computed since start, "building" before (rounds
 *                   wait for it), "none" in a single-node cluster
 * @param treesAt    when the trees were last brought up to date (epoch ms); 0 never
 * @param lastRounds peer id to the last round this node started with it
 */
public record AntiEntropyState(String trees, long treesAt, SortedMap<String, LastRound> lastRounds) {

    public AntiEntropyState {
        lastRounds = new TreeMap<>(lastRounds);
    }

    /**
     * One round with a peer, as it ended.
     *
     * @param endedAt          epoch ms
     * @param ok               whether it completed
     * @param recordsExchanged records sent and received (0 when it failed)
     * @param durationMs       how long it took (0 when it failed)
     * @param error            why it failed; null when it completed
     */
    public record LastRound(long endedAt, boolean ok, long recordsExchanged, long durationMs, String error) {
    }
}
