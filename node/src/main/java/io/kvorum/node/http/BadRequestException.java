package io.kvorum.node.http;

/** The request is malformed; the message, one line for the client, becomes a 400 body. */
final class BadRequestException extends RuntimeException {
    BadRequestException(String message) {
        super(message, null, false, false);
    }
}
