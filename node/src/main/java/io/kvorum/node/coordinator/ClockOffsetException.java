package io.kvorum.node.coordinator;

import io.kvorum.node.error.RequestException;

/**
 * A write reached a coordinator whose wall clock is off from most of its peers' (see
 * {@code liveness.ClockOffsets}): it was not stamped or sent anywhere, and the client should write
 * through another node ({@code 503} with {@code Retry-After}, as for a node that is not a member).
 */
public final class ClockOffsetException extends RequestException {
    public ClockOffsetException(String message) {
        super(Code.CLOCK_OFFSET, message);
    }
}
