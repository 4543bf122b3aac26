package io.kvorum.node.util;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.time.RequestTimer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WheelRequestTimerTest {

    private final WheelRequestTimer timer = new WheelRequestTimer();

    @AfterEach
    void stop() {
        timer.close();
    }

    @Test
    void aTaskRunsOnceItsDelayHasPassedAndNotBefore() throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);
        AtomicLong ranAfterNanos = new AtomicLong();
        long start = System.nanoTime();
        timer.schedule(() -> {
            ranAfterNanos.set(System.nanoTime() - start);
            ran.countDown();
        }, 100, TimeUnit.MILLISECONDS);

        assertThat(ran.await(10, TimeUnit.SECONDS)).as("the task ran").isTrue();
        assertThat(ranAfterNanos.get()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
    }

    @Test
    void aCancelledTaskNeverRuns() throws InterruptedException {
        AtomicBoolean cancelledRan = new AtomicBoolean();
        RequestTimer.Timeout cancelled = timer.schedule(() -> cancelledRan.set(true), 30, TimeUnit.MILLISECONDS);
        cancelled.cancel();
        cancelled.cancel(); // idempotent

        // A later task as a fence: once it has run, the wheel has passed the cancelled task's tick.
        CountDownLatch fence = new CountDownLatch(1);
        timer.schedule(fence::countDown, 200, TimeUnit.MILLISECONDS);
        assertThat(fence.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(cancelledRan).as("the cancelled task ran").isFalse();
    }

    @Test
    void tasksRunOnTheNamedTimerThread() throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);
        StringBuilder thread = new StringBuilder();
        timer.schedule(() -> {
            thread.append(Thread.currentThread().getName());
            ran.countDown();
        }, 1, TimeUnit.MILLISECONDS);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(thread.toString()).startsWith("request-timer");
    }
}
