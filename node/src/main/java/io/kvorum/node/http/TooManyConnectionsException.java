package io.kvorum.node.http;

/**
 * The gateway already serves as many connections as its {@link ConnectionLimit} allows. On a
 * refused connection, {@link BodyAdmissionHandler} hands every request to the
 * {@link ConnectionHandler} with this as its decoder failure; it answers {@code 503} and closes
 * the connection.
 */
final class TooManyConnectionsException extends RuntimeException {

    TooManyConnectionsException(int limit) {
        super("this node already serves its limit of " + limit + " client connections (--max-connections)",
                null, false, false);
    }
}
