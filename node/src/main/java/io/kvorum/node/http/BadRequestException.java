package io.kvorum.node.http;

import io.kvorum.node.error.RequestException;

/** The request is malformed; the message, one line for the client, becomes a 400 body. */
final class BadRequestException extends RequestException {
    BadRequestException(String message) {
        super(Code.BAD_REQUEST, message);
    }
}
