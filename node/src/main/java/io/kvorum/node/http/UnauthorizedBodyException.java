package io.kvorum.node.http;

/**
 * A request whose body may not be read: the node asks for bearer tokens and the request's headers
 * carry none that is valid, or one whose role falls short of what its endpoint needs.
 * {@link BodyAdmissionHandler} hands a request carrying this as its decoder failure to the
 * {@link ConnectionHandler}, which answers {@code 401} or {@code 403} in the request's turn (as
 * {@link BearerAuthentication} would) and closes the connection, the body unread.
 */
final class UnauthorizedBodyException extends RuntimeException {

    private final BearerAuthentication.Refusal refusal;

    UnauthorizedBodyException(BearerAuthentication.Refusal refusal) {
        super("a request with a body and without a bearer token that allows it", null, false, false);
        this.refusal = refusal;
    }

    /** Why the request was refused: its answer. */
    BearerAuthentication.Refusal refusal() {
        return refusal;
    }
}
