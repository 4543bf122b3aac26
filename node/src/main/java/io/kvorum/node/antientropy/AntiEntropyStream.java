package io.kvorum.node.antientropy;

/**
 * The transport's end of one round's stream, as a session drives it. A transport adapter
 * implements it over its own stream (a gRPC bidirectional call) and feeds what arrives back to the
 * session ({@link AntiEntropySession#onMessage}, {@link AntiEntropySession#onReady},
 * {@link AntiEntropySession#onPeerClosed}, {@link AntiEntropySession#onPeerFailed}).
 *
 * <p>Flow control is explicit on both sides: the transport delivers no message that was not
 * {@link #request requested}, and the session sends bulk data only while {@link #isReady}.
 *
 * <p>Threading: a session calls these methods from its own serial executor only, one at a time;
 * {@link #isReady} may be called from any thread.
 */
public interface AntiEntropyStream {

    /** Whether a message sent now would be taken without piling up beyond the transport's buffer. */
    boolean isReady();

    /** Sends one message; never blocks. */
    void send(AntiEntropyMessage message);

    /** Allows {@code count} more inbound messages to be delivered. */
    void request(int count);

    /** Ends this side of the stream normally; nothing is sent afterwards. */
    void complete();

    /** Ends the stream with an error the peer sees; harmless on a stream that is already closed. */
    void abort(RepairException error);
}
