package io.kvorum.node.time;

/**
 * A replica refused a record whose timestamp is further ahead of its wall clock than
 * {@code --max-clock-offset} (docs/operations.md#clocks). The record had no effect there; it is
 * not hinted, since delivering it later would be refused the same way until that clock caught up.
 */
public final class TimestampAheadException extends RuntimeException {

    public TimestampAheadException(String message) {
        super(message, null, false, false);
    }
}
