package io.kvorum.node.coordinator;

import static io.kvorum.node.coordinator.CoordinatorTest.failureOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.time.ManualClock;
import io.kvorum.node.time.RequestTimer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link LargeWriteAdmission} on a clock and a timer the test moves; request timeout 1 s. */
class LargeWriteAdmissionTest {

    private static final int MIB4 = 4 << 20;

    private final ManualClock clock = new ManualClock(1_700_000_000_000L);
    /** The tasks scheduled, run by hand with {@link #fireTimers}. */
    private final List<Runnable> timers = new CopyOnWriteArrayList<>();
    private final List<Long> timerDelaysNanos = new CopyOnWriteArrayList<>();
    private final RequestTimer timer = (task, delay, unit) -> {
        timers.add(task);
        timerDelaysNanos.add(unit.toNanos(delay));
        return () -> timers.remove(task);
    };
    private final LargeWriteAdmission admission = new LargeWriteAdmission(clock, timer, Duration.ofMillis(1000));

    private void fireTimers() {
        List<Runnable> due = List.copyOf(timers);
        timers.clear();
        due.forEach(Runnable::run);
    }

    private LargeWriteAdmission.Ticket admitNow(int bytes) {
        CompletableFuture<LargeWriteAdmission.Ticket> f = admission.admit(bytes);
        assertThat(f).as("admitted at once").isCompleted();
        return f.join();
    }

    private List<LargeWriteAdmission.Ticket> admitAll(int count) {
        List<LargeWriteAdmission.Ticket> tickets = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            tickets.add(admitNow(MIB4));
        }
        return tickets;
    }

    /** The write of {@code ticket} was answered and its replica calls settled at once. */
    private void finish(LargeWriteAdmission.Ticket ticket, boolean succeeded) {
        admission.answered(ticket, succeeded);
        admission.released(ticket);
    }

    @Test
    void anAnsweredWriteHoldsItsBytesUntilItsReplicaCallsSettle() {
        List<LargeWriteAdmission.Ticket> eight = admitAll(8);
        CompletableFuture<LargeWriteAdmission.Ticket> ninth = admission.admit(MIB4);

        clock.advance(100);
        admission.answered(eight.get(0), true); // answered, but a replica call still holds the value
        assertThat(ninth).isNotDone();
        assertThat(admission.inProgress()).isEqualTo(8);

        admission.released(eight.get(0));
        assertThat(ninth).isCompleted();
        assertThat(admission.inProgress()).isEqualTo(8);
    }

    @Test
    void aWriteBeyondTheBoundWaitsAndGoesWithWhatIsLeftOfTheTimeoutOnceAnotherIsAnswered() {
        List<LargeWriteAdmission.Ticket> eight = admitAll(8); // 32 MiB, the initial bound
        assertThat(eight.get(0).budgetNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(1));

        CompletableFuture<LargeWriteAdmission.Ticket> ninth = admission.admit(MIB4);
        assertThat(ninth).isNotDone();
        assertThat(admission.waiting()).isEqualTo(1);
        assertThat(timerDelaysNanos).containsExactly(TimeUnit.MILLISECONDS.toNanos(250)); // a quarter of the timeout

        clock.advance(200); // answered within half the timeout: the bound grows a little too
        finish(eight.get(0), true);
        assertThat(ninth).isCompleted();
        assertThat(ninth.join().budgetNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(800));
        assertThat(admission.inProgress()).isEqualTo(8);
        fireTimers(); // the wait's timer, late: nothing to refuse any more
        assertThat(ninth).isCompleted();
    }

    @Test
    void aWriteStillWaitingAfterAQuarterOfTheTimeoutIsRefused() {
        admitAll(8);
        CompletableFuture<LargeWriteAdmission.Ticket> ninth = admission.admit(MIB4);
        clock.advance(250);
        fireTimers();

        assertThat(failureOf(ninth)).isInstanceOf(OverloadedException.class)
                .hasMessage("a large write waited 250 ms for those in progress (32 MiB in progress; this node"
                        + " admits 32 MiB now, a bound that follows how fast they complete)");
        assertThat(admission.waiting()).isZero();
        assertThat(admission.inProgress()).isEqualTo(8);
    }

    @Test
    void theLineIsFirstComeFirstServedAndBounded() {
        List<LargeWriteAdmission.Ticket> eight = admitAll(8);
        CompletableFuture<LargeWriteAdmission.Ticket> big = admission.admit(8 << 20);
        CompletableFuture<LargeWriteAdmission.Ticket> small = admission.admit(LargeWriteAdmission.LARGE_VALUE_BYTES);
        for (int i = 2; i < LargeWriteAdmission.MAX_WAITING; i++) {
            admission.admit(MIB4);
        }
        assertThat(failureOf(admission.admit(MIB4))).isInstanceOf(OverloadedException.class)
                .hasMessageStartingWith(LargeWriteAdmission.MAX_WAITING + " large writes are waiting already");

        clock.advance(100);
        finish(eight.get(0), true); // 4 MiB freed: the 8 MiB write at the head does not fit yet
        assertThat(big).isNotDone();
        assertThat(small).as("not ahead of the head of the line").isNotDone();
        finish(eight.get(1), true);
        assertThat(big).isCompleted();
        assertThat(small).isCompleted(); // it fits behind it: the bound grew with the fast answers
    }

    @Test
    void fastWritesRaiseTheBoundByAboutOneWritePerBoundsWorth() {
        for (int round = 0; round < 2; round++) {
            for (LargeWriteAdmission.Ticket t : admitAll(8)) {
                clock.advance(10);
                finish(t, true);
            }
        }
        // Each of the 16 added 4 MiB x 4 MiB / bound: 32 MiB grew to about sqrt(32^2 + 2 x 16 x 16) MiB.
        assertThat(admission.limitBytes()).isBetween(39L << 20, (long) (39.5 * (1 << 20)));
        admitAll(9);
        assertThat(admission.admit(MIB4)).as("the tenth waits").isNotDone();
    }

    @Test
    void slowOrFailedWritesLowerTheBoundOncePerHalfTimeoutAndMiddlingOnesHoldIt() {
        List<LargeWriteAdmission.Ticket> five = admitAll(5);
        clock.advance(600);
        finish(five.get(0), true); // between half and three quarters: holds
        assertThat(admission.limitBytes()).isEqualTo(LargeWriteAdmission.INITIAL_LIMIT_BYTES);
        clock.advance(200);
        finish(five.get(1), true); // slow: 32 -> 22.4 MiB
        finish(five.get(2), false); // failed, but within the same half timeout: no further
        long once = (long) (LargeWriteAdmission.INITIAL_LIMIT_BYTES * 0.7);
        assertThat(admission.limitBytes()).isEqualTo(once);

        clock.advance(501);
        finish(five.get(3), false);
        assertThat(admission.limitBytes()).isEqualTo((long) (once * 0.7));
    }

    @Test
    void oneLargeWriteIsAlwaysAdmittedWhenNoneIsInProgress() {
        for (int i = 0; i < 40; i++) {
            LargeWriteAdmission.Ticket t = admitNow(MIB4);
            clock.advance(501);
            finish(t, false);
        }
        assertThat(admission.limitBytes()).isEqualTo(LargeWriteAdmission.LARGE_VALUE_BYTES);
        admitNow(64 << 20); // larger than the bound itself
        assertThat(admission.admit(MIB4)).isNotDone();
    }

    @Test
    void onlyLargeValuesGoThroughAdmission() {
        assertThat(LargeWriteAdmission.isLarge(LargeWriteAdmission.LARGE_VALUE_BYTES - 1)).isFalse();
        assertThat(LargeWriteAdmission.isLarge(LargeWriteAdmission.LARGE_VALUE_BYTES)).isTrue();
        assertThatThrownBy(() -> admission.admit(100)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theBoundStartsAndStaysUnderTheMemoryCeilingHoweverFastWritesComplete() {
        LargeWriteAdmission small = new LargeWriteAdmission(clock, timer, Duration.ofMillis(1000), 10L << 20);
        assertThat(small.limitBytes()).as("starts at the ceiling, under the usual 32 MiB").isEqualTo(10L << 20);

        for (int i = 0; i < 1000; i++) { // every write answered at once: the bound would grow to 1 GiB
            CompletableFuture<LargeWriteAdmission.Ticket> write = small.admit(MIB4);
            assertThat(write).isCompleted();
            small.answered(write.join(), true);
            small.released(write.join());
        }
        assertThat(small.limitBytes()).isEqualTo(10L << 20);
        small.admit(MIB4);
        small.admit(MIB4);
        assertThat(small.admit(MIB4)).as("a third 4 MiB write exceeds 10 MiB: it waits").isNotDone();

        assertThat(LargeWriteAdmission.memoryCeiling()).as("a twelfth of this JVM's smaller memory")
                .isEqualTo(io.kvorum.node.util.ProcessMemory.smallerOfHeapAndDirect() / 12);
    }
}
