package io.kvorum.client;

/** 400, 405 or 413: the node refused the request as malformed; retrying it cannot help. */
public final class BadRequestException extends KvorumException {

    public BadRequestException(int status, String message) {
        super(status, message);
    }
}
