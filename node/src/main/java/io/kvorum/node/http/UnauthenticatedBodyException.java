package io.kvorum.node.http;

/**
 * A request whose body may not be read: the node asks for a bearer token and the request's headers
 * carry none that is valid. {@link BodyAdmissionHandler} hands a request carrying this as its
 * decoder failure to the {@link ConnectionHandler}, which answers {@code 401} in the request's turn
 * (as {@link BearerAuthentication} would) and closes the connection, the body unread.
 */
final class UnauthenticatedBodyException extends RuntimeException {

    private final int credentials;

    UnauthenticatedBodyException(int credentials) {
        super("a request with a body and without a valid bearer token", null, false, false);
        this.credentials = credentials;
    }

    /** How many {@code Authorization} headers the request carried (not what they said). */
    int credentials() {
        return credentials;
    }
}
