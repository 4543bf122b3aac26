package io.kvorum.client;

import java.time.Duration;

/**
 * A node refused a request; {@link #status()} is the HTTP status. The client throws the subclass
 * that names the case: {@link BadRequestException} (400, 405, 413), {@link UnauthorizedException}
 * (401), {@link ForbiddenException} (403), {@link OverloadedException} (503, or the client's own bound on pending requests),
 * {@link NotEnoughReplicasException} (504); any other unexpected status is a plain
 * {@code KvorumException}.
 *
 * <p>Failures to talk to a node at all are not {@code KvorumException}s but {@link java.io.IOException}s;
 * see {@link KvorumClient}.
 */
public class KvorumException extends RuntimeException {

    private final int status;

    public KvorumException(int status, String message) {
        super("HTTP " + status + ": " + message);
        this.status = status;
    }

    static KvorumException of(int status, byte[] body) {
        return of(status, body, null);
    }

    /** The exception for a refusal; {@code retryAfter} (nullable) is the answer's {@code Retry-After}. */
    static KvorumException of(int status, byte[] body, Duration retryAfter) {
        // A node's refusal (4xx, 5xx) is a description; any other body may be a value (a proxy or
        // another server answering in the node's place), which a message must not carry into logs.
        String message = status >= 400 ? KvorumClient.preview(body)
                : "unexpected answer (" + (body == null ? 0 : body.length) + " bytes, not shown)";
        return switch (status) {
            case 400, 405, 413 -> new BadRequestException(status, message);
            case 401 -> new UnauthorizedException(message);
            case 403 -> new ForbiddenException(message);
            case 503 -> new OverloadedException(message, retryAfter);
            case 504 -> new NotEnoughReplicasException(message);
            default -> new KvorumException(status, message);
        };
    }

    public int status() {
        return status;
    }

    /** 504 {@code Not Enough Replicas}: fewer than {@code ack} replicas answered in time. */
    public boolean isNotEnoughReplicas() {
        return status == 504;
    }

    /** 503: the node (or the client's own queue) is overloaded; the request had no effect and may be retried. */
    public boolean isOverloaded() {
        return status == 503;
    }
}
