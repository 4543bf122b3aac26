package io.kvorum.node.time;

import static io.kvorum.node.time.HybridLogicalClock.logical;
import static io.kvorum.node.time.HybridLogicalClock.pack;
import static io.kvorum.node.time.HybridLogicalClock.physicalMillis;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class HybridLogicalClockTest {

    private static final long T0 = 1_700_000_000_000L;

    private final ManualClock wall = new ManualClock(T0);
    private final HybridLogicalClock hlc = new HybridLogicalClock(wall);

    @Test
    void aTimestampFromAPeerFurtherAheadThanTheBoundIsNotAdopted() {
        HybridLogicalClock bounded = new HybridLogicalClock(wall, java.time.Duration.ofMillis(500));

        assertThat(bounded.observeFromPeer(pack(T0 + 501, 0))).isFalse();
        assertThat(physicalMillis(bounded.now())).as("still the wall clock").isEqualTo(T0);
        assertThat(bounded.observeFromPeer(pack(T0 + 500, 7))).isTrue();
        assertThat(bounded.now()).isEqualTo(pack(T0 + 500, 8));
        bounded.observe(pack(T0 + 60_000, 0)); // its own, as the store's ceiling at start
        assertThat(physicalMillis(bounded.now())).isEqualTo(T0 + 60_000);
        assertThat(hlc.observeFromPeer(pack(T0 + 3_600_000, 0))).as("no bound").isTrue();
    }

    @Test
    void afterAStartPastItsStoreTheBoundCountsFromTheStoredTimestampsUntilTheWallClockPassesThem() {
        HybridLogicalClock bounded = new HybridLogicalClock(wall, java.time.Duration.ofMillis(500));
        bounded.startPast(pack(T0 + 3_600_000, 0)); // every wall clock of the cluster went an hour back

        assertThat(bounded.leadMillis()).as("its own timestamps are not ahead of where it left off").isZero();
        assertThat(bounded.observeFromPeer(pack(T0 + 3_600_400, 0))).as("a peer that left off there too").isTrue();
        assertThat(bounded.observeFromPeer(pack(T0 + 3_601_000, 0))).isFalse();
        bounded.observeFromPeer(pack(T0 + 3_600_500, 0));
        assertThat(bounded.observeFromPeer(pack(T0 + 3_601_000, 1))).as("adopting does not move the floor").isFalse();
    }

    @Test
    void takesTheWallClockWhenItIsAhead() {
        long first = hlc.now();
        assertThat(first).isEqualTo(pack(T0, 0));
        wall.advance(5);
        long second = hlc.now();
        assertThat(second).isEqualTo(pack(T0 + 5, 0));
    }

    @Test
    void strictlyIncreasesWhileTheWallClockStandsStill() {
        long previous = hlc.now();
        for (int i = 1; i <= 1000; i++) {
            long next = hlc.now();
            assertThat(next).isGreaterThan(previous);
            assertThat(physicalMillis(next)).isEqualTo(T0);
            assertThat(logical(next)).isEqualTo(i);
            previous = next;
        }
    }

    @Test
    void strictlyIncreasesWhenTheWallClockGoesBackwards() {
        long before = hlc.now();
        wall.set(T0 - 60_000);
        long after = hlc.now();
        assertThat(after).isGreaterThan(before);
        assertThat(physicalMillis(after)).isEqualTo(T0);

        // Once the wall clock passes the last timestamp again, it takes over.
        wall.set(T0 + 1);
        assertThat(hlc.now()).isEqualTo(pack(T0 + 1, 0));
    }

    @Test
    void observingAFutureTimestampMovesTheNextNowPastIt() {
        long remote = pack(T0 + 5_000, 9);
        hlc.observe(remote);
        long next = hlc.now();
        assertThat(next).isGreaterThan(remote);
        assertThat(next).isEqualTo(pack(T0 + 5_000, 10));
    }

    @Test
    void observingAPastTimestampChangesNothing() {
        long first = hlc.now();
        hlc.observe(pack(T0 - 1_000, 500));
        assertThat(hlc.now()).isEqualTo(first + 1);
    }

    @Test
    void nowIsGreaterThanEverythingObservedAndIssued() {
        List<Long> seen = new ArrayList<>();
        long[] remotes = {pack(T0 + 10, 0), pack(T0 + 3, 40), pack(T0 + 10, 7), pack(T0 + 9, 65_535)};
        for (long remote : remotes) {
            hlc.observe(remote);
            seen.add(remote);
            long now = hlc.now();
            assertThat(seen).allMatch(s -> now > s);
            seen.add(now);
            wall.advance(1);
        }
    }

    @Test
    void logicalOverflowStillIncreases() {
        long full = pack(T0, 0xFFFF);
        hlc.observe(full);
        long next = hlc.now();
        assertThat(next).isGreaterThan(full);
        assertThat(physicalMillis(next)).isEqualTo(T0 + 1);
        assertThat(logical(next)).isZero();
        assertThat(hlc.now()).isGreaterThan(next);
    }

    @Test
    void packRoundTrips() {
        long[] millis = {0, 1, T0, (1L << 47), (1L << 48) - 1};
        int[] logicals = {0, 1, 255, 256, 0x7FFF, 0x8000, 0xFFFF};
        for (long m : millis) {
            for (int l : logicals) {
                long ts = pack(m, l);
                assertThat(physicalMillis(ts)).as("physical of %d/%d", m, l).isEqualTo(m);
                assertThat(logical(ts)).as("logical of %d/%d", m, l).isEqualTo(l);
            }
        }
    }

    @Test
    void packedTimestampsCompareLikeTheirParts() {
        assertThat(pack(T0, 0xFFFF)).isLessThan(pack(T0 + 1, 0));
        assertThat(pack(T0, 1)).isGreaterThan(pack(T0, 0));
        assertThat(Long.compareUnsigned(pack((1L << 48) - 1, 0), pack(1, 0))).isPositive();
    }

    @Test
    void concurrentCallersGetUniqueIncreasingValues() throws Exception {
        int threads = 4;
        int perThread = 20_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<long[]>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    start.await();
                    long[] out = new long[perThread];
                    for (int i = 0; i < perThread; i++) {
                        out[i] = hlc.now();
                        if (i % 1000 == 0) {
                            hlc.observe(out[i] - 5); // observers interleave with issuers
                        }
                    }
                    return out;
                }));
            }
            start.countDown();
            Set<Long> all = new HashSet<>();
            for (Future<long[]> f : results) {
                long[] values = f.get(20, TimeUnit.SECONDS);
                for (int i = 0; i < values.length; i++) {
                    if (i > 0) {
                        assertThat(values[i]).isGreaterThan(values[i - 1]);
                    }
                    all.add(values[i]);
                }
            }
            assertThat(all).hasSize(threads * perThread);
        } finally {
            pool.shutdownNow();
        }
    }
}
