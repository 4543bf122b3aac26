package io.kvorum.node.http;

import static io.kvorum.node.http.ConnectionLimit.Admission.ADMITTED;
import static io.kvorum.node.http.ConnectionLimit.Admission.DROPPED;
import static io.kvorum.node.http.ConnectionLimit.Admission.REFUSED;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.http.ConnectionLimit.Admission;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The count behind {@code --max-connections}: who is served, refused or dropped, and how the limit follows the open-file limit. */
class ConnectionLimitTest {

    @Test
    void servesUpToTheLimitThenRefusesThenDrops() {
        ConnectionLimit limit = new ConnectionLimit(2, 1);

        assertThat(List.of(limit.admit(), limit.admit(), limit.admit(), limit.admit()))
                .containsExactly(ADMITTED, ADMITTED, REFUSED, DROPPED);
        assertThat(limit.open()).isEqualTo(2);
        assertThat(limit.refused()).as("refused and dropped alike").isEqualTo(2);
    }

    @Test
    void aClosedConnectionFreesItsPlaceAndARefusedOneItsRefusal() {
        ConnectionLimit limit = new ConnectionLimit(1, 1);
        limit.admit();
        limit.admit(); // refused

        limit.closed(REFUSED);
        assertThat(limit.admit()).as("a refusal is free again, the limit is not").isEqualTo(REFUSED);
        limit.closed(ADMITTED);
        assertThat(limit.admit()).isEqualTo(ADMITTED);
        limit.closed(DROPPED); // counts nowhere
        assertThat(limit.open()).isEqualTo(1);
        assertThat(limit.admit()).isEqualTo(DROPPED);
    }

    @Test
    void theLimitLeavesTheStoreItsShareOfTheOpenFileLimit() {
        assertThat(ConnectionLimit.effective(10_000, 1_048_576)).isEqualTo(10_000);
        assertThat(ConnectionLimit.effective(10_000, Long.MAX_VALUE)).isEqualTo(10_000);
        assertThat(ConnectionLimit.effective(10_000, 20_000)).isEqualTo(10_000);
        assertThat(ConnectionLimit.effective(10_000, 4096)).isEqualTo(4096 - ConnectionLimit.RESERVED_DESCRIPTORS);
        assertThat(ConnectionLimit.effective(10_000, 1024)).as("never below the floor").isEqualTo(ConnectionLimit.FLOOR);
        assertThat(ConnectionLimit.effective(10, 1024)).isEqualTo(10);
    }

    @Test
    void theOpenFileLimitIsThisProcesssOwn() {
        // The JVM on Linux reads it from getrlimit; the test JVM always has some files open.
        assertThat(ConnectionLimit.openFileLimit()).isGreaterThan(ConnectionLimit.FLOOR);
    }

    @Test
    void threadsAdmittingAndClosingAtOnceNeverServeMoreThanTheLimit() throws Exception {
        int max = 3;
        int threads = 4;
        ConnectionLimit limit = new ConnectionLimit(max, 2);
        AtomicInteger served = new AtomicInteger();
        AtomicInteger mostServed = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        Admission a = limit.admit();
                        if (a == ADMITTED) {
                            mostServed.accumulateAndGet(served.incrementAndGet(), Math::max);
                            served.decrementAndGet();
                        }
                        limit.closed(a);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(mostServed.get()).isBetween(1, max);
        assertThat(limit.open()).as("every place given back").isZero();
        assertThat(limit.admit()).isEqualTo(ADMITTED);
    }
}
