package io.kvorum.client;

/**
 * 401: the node requires a bearer token and the client sent none or an unknown one (see
 * {@link KvorumClient.Builder#bearerToken(String)}). The request had no effect.
 */
public final class UnauthorizedException extends KvorumException {

    public UnauthorizedException(String message) {
        super(401, message);
    }
}
