package io.kvorum.node.transport.grpc;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvorum.node.util.Failures;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** The two ends of a unary call as futures, shared by the membership and backup services and clients. */
final class UnaryCalls {

    private UnaryCalls() {
    }

    /**
     * Answers a served call with {@code result} once it completes; a failure as {@code statusOf}
     * maps it (unwrapped). A caller that gave up or went away is not answered.
     */
    static <T> void answer(CompletableFuture<T> result, StreamObserver<T> responses,
                           Function<Throwable, ? extends RuntimeException> statusOf) {
        result.whenComplete((value, error) -> {
            try {
                if (error == null) {
                    responses.onNext(value);
                    responses.onCompleted();
                } else {
                    responses.onError(statusOf.apply(Failures.unwrap(error)));
                }
            } catch (RuntimeException e) {
                // the caller gave up (deadline) or went away: nothing to answer
            }
        });
    }

    /** Completes {@code answer} with a call's one answer, or with {@code failure} of what it failed with. */
    static <T> StreamObserver<T> completing(CompletableFuture<T> answer, Function<Throwable, ? extends Throwable> failure) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                answer.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                answer.completeExceptionally(failure.apply(t));
            }

            @Override
            public void onCompleted() {
                if (!answer.isDone()) {
                    answer.completeExceptionally(failure.apply(Status.INTERNAL.withDescription("no answer").asRuntimeException()));
                }
            }
        };
    }
}
