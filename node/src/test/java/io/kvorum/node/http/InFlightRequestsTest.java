package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The wait of a graceful stop: it ends when the last request in progress finishes, or at its bound. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InFlightRequestsTest {

    private final InFlightRequests inFlight = new InFlightRequests();

    @Test
    void withNothingInProgressTheWaitIsOverAtOnce() throws InterruptedException {
        inFlight.started();
        inFlight.finished();
        assertThat(inFlight.awaitNone(Duration.ZERO)).isTrue();
    }

    @Test
    void theWaitEndsWhenTheLastRequestFinishes() throws Exception {
        inFlight.started();
        inFlight.started();
        CompletableFuture<Boolean> drained = CompletableFuture.supplyAsync(() -> await(Duration.ofMinutes(1)));

        inFlight.finished();
        assertThat(inFlight.count()).isEqualTo(1);
        inFlight.finished();

        assertThat(drained.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(inFlight.count()).isZero();
    }

    @Test
    void theWaitGivesUpAtItsBound() throws InterruptedException {
        inFlight.started();
        assertThat(inFlight.awaitNone(Duration.ofMillis(50))).isFalse();
        inFlight.finished();
        assertThat(inFlight.awaitNone(Duration.ZERO)).as("a later wait").isTrue();
    }

    private boolean await(Duration bound) {
        try {
            return inFlight.awaitNone(bound);
        } catch (InterruptedException e) {
            throw new CompletionException(e);
        }
    }
}
