package io.kvorum.node.storage;

/**
 * A read was dropped unread: it waited for a storage reader longer than the request timeout, by
 * which time whoever asked had stopped waiting for it. It had no effect.
 */
public final class ReadExpiredException extends RuntimeException {

    public ReadExpiredException(long waitedMillis) {
        super("the read waited " + waitedMillis + " ms for a storage reader, past the request timeout; dropped unread",
                null, false, false);
    }
}
