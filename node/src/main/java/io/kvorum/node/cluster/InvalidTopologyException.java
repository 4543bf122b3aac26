package io.kvorum.node.cluster;

/** A topology that cannot be: a malformed entry, or a duplicate id or endpoint. The message names it in one line. */
public final class InvalidTopologyException extends Exception {

    public InvalidTopologyException(String message) {
        super(message);
    }
}
