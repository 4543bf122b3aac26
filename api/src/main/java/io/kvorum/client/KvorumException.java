package io.kvorum.client;

/** A node refused a request; {@link #status()} is the HTTP status (400, 413, 503, 504, ...). */
public final class KvorumException extends RuntimeException {

    private final int status;

    public KvorumException(int status, String message) {
        super("HTTP " + status + ": " + message);
        this.status = status;
    }

    static KvorumException of(int status, byte[] body) {
        return new KvorumException(status, KvorumClient.preview(body));
    }

    public int status() {
        return status;
    }

    /** 504 {@code Not Enough Replicas}: fewer than {@code ack} replicas answered in time. */
    public boolean isNotEnoughReplicas() {
        return status == 504;
    }

    /** 503: the node is overloaded; the request had no effect and may be retried. */
    public boolean isOverloaded() {
        return status == 503;
    }
}
