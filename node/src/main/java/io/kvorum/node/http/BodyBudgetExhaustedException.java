package io.kvorum.node.http;

/**
 * The gateway already holds as many bytes of request bodies as its {@link ByteBudget}
 * allows. {@link BodyAdmissionHandler} hands a request carrying this as its decoder failure to the
 * {@link ConnectionHandler}, which answers {@code 503} in the request's turn and closes the connection.
 */
final class BodyBudgetExhaustedException extends RuntimeException {

    BodyBudgetExhaustedException(long limit) {
        super("the request bodies in progress reached this node's limit of " + limit + " bytes", null, false, false);
    }
}
