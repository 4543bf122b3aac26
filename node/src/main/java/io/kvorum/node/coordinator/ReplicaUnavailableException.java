package io.kvorum.node.coordinator;

import io.kvorum.node.util.Failures;
import java.util.concurrent.CompletableFuture;

/**
 * A replica did not answer: it is down, unreachable, refused us, or missed the deadline. The
 * outcome of a write is then unknown (it may or may not have been stored). {@link #reason()} says
 * which, so that liveness can tell a connection that failed from a peer that is merely slow.
 */
public final class ReplicaUnavailableException extends RuntimeException {

    /** Why the replica did not answer. */
    public enum Reason {
        /** The connection to the peer failed or could not be made: evidence that it is down. */
        UNREACHABLE,
        /** Not sent: the peer is known to be down (liveness), so the request failed at once. */
        KNOWN_DOWN,
        /** Sent, but no answer came within the deadline: the peer may be slow, frozen or gone. */
        TIMED_OUT,
        /** The peer answered with a refusal or an error. */
        FAILED
    }

    private final Reason reason;
    private final CompletableFuture<Void> lateAnswer;

    public ReplicaUnavailableException(String message) {
        this(Reason.FAILED, message);
    }

    public ReplicaUnavailableException(Reason reason, String message) {
        this(reason, message, null);
    }

    private ReplicaUnavailableException(Reason reason, String message, CompletableFuture<Void> lateAnswer) {
        super(message, null, false, false);
        this.reason = reason;
        this.lateAnswer = lateAnswer;
    }

    /**
     * A call that timed out but is still awaited: {@code lateAnswer} completes normally if the peer
     * answers it with a success after all, exceptionally if it fails or stays unanswered.
     */
    public static ReplicaUnavailableException timedOut(String message, CompletableFuture<Void> lateAnswer) {
        return new ReplicaUnavailableException(Reason.TIMED_OUT, message, lateAnswer);
    }

    public Reason reason() {
        return reason;
    }

    /**
     * For a write that timed out while still awaited, whether the peer took it after all (see
     * {@link #timedOut}); null when the outcome is already final.
     */
    public static CompletableFuture<Void> lateAnswerOf(Throwable error) {
        return Failures.unwrap(error) instanceof ReplicaUnavailableException e ? e.lateAnswer : null;
    }

    /** Why a future failed with {@code error}: its reason if it is one of these, else {@code FAILED}. */
    public static Reason reasonOf(Throwable error) {
        return Failures.unwrap(error) instanceof ReplicaUnavailableException e ? e.reason() : Reason.FAILED;
    }
}
