package io.kvorum.client;

/**
 * 403: the client's bearer token is valid, but its role does not allow the request: a {@code read}
 * token's write, say, or a {@code write} token's membership change (docs/operations.md#security).
 * The request had no effect; sending it again with the same token is refused again.
 */
public final class ForbiddenException extends KvorumException {

    public ForbiddenException(String message) {
        super(403, message);
    }
}
