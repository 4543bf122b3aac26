package io.kvorum.node.http;

import io.kvorum.node.error.RequestException;

/** A client request reached a node that is not a member of the cluster: 503, so that clients fail over. */
final class NotAMemberException extends RequestException {
    NotAMemberException(String message) {
        super(Code.NOT_A_MEMBER, message);
    }
}
