package io.kvorum.testkit;

import static io.kvorum.testkit.History.Outcome.MAYBE_ANY_TIME;
import static io.kvorum.testkit.History.Outcome.MAYBE_BEFORE_ANSWER;
import static io.kvorum.testkit.History.Outcome.NO_EFFECT;
import static io.kvorum.testkit.History.Outcome.OK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.testkit.History.Op;
import io.kvorum.testkit.History.Outcome;
import io.kvorum.testkit.History.Type;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker finds each kind of violation and accepts what LWW with failed writes allows. No Docker. */
class HistoryCheckerTest {

    private static Op put(String value, Outcome outcome, long invoke, long complete) {
        return new Op(1, "n1", Type.PUT, "k", value, outcome, invoke * 1_000_000, complete * 1_000_000, invoke, complete, null);
    }

    private static Op delete(Outcome outcome, long invoke, long complete) {
        return new Op(1, "n1", Type.DELETE, "k", null, outcome, invoke * 1_000_000, complete * 1_000_000, invoke, complete, null);
    }

    private static Op get(String value, long invoke, long complete) {
        return new Op(2, "n2", Type.GET, "k", value, OK, invoke * 1_000_000, complete * 1_000_000, invoke, complete, null);
    }

    @Test
    void sequentialHistoryIsValid() {
        assertThat(HistoryChecker.check(List.of(
                get(null, 0, 5),
                put("a", OK, 10, 20), get("a", 30, 40),
                put("b", OK, 50, 60), get("b", 70, 80),
                delete(OK, 90, 100), get(null, 110, 120)))).isEmpty();
    }

    @Test
    void readingAnOlderAcknowledgedWriteIsStale() {
        assertThat(HistoryChecker.check(List.of(
                put("a", OK, 0, 10), put("b", OK, 20, 30), get("a", 40, 50))))
                .singleElement().asString().startsWith("stale read");
    }

    @Test
    void anAcknowledgedDeleteCannotBeUndoneByAnOlderPut() {
        assertThat(HistoryChecker.check(List.of(
                put("a", OK, 0, 10), delete(OK, 20, 30), get("a", 40, 50))))
                .singleElement().asString().startsWith("stale read");
    }

    @Test
    void overlappingWritesMayLandInEitherOrder() {
        assertThat(HistoryChecker.check(List.of(
                put("a", OK, 0, 30), put("b", OK, 10, 40), get("a", 50, 60), get("b", 70, 80)))).isEmpty();
        // Answered one millisecond apart: the same HLC millisecond, so still unordered.
        assertThat(HistoryChecker.check(List.of(
                put("a", OK, 0, 10), put("b", OK, 11, 20), get("a", 30, 40)))).isEmpty();
    }

    @Test
    void aMissingAcknowledgedWriteIsLost() {
        assertThat(HistoryChecker.check(List.of(put("a", OK, 0, 10), get(null, 20, 30))))
                .singleElement().asString().startsWith("lost write");
    }

    @Test
    void aWriteWithoutAnAnswerMayTakeEffectLater() {
        assertThat(HistoryChecker.check(List.of(
                put("a", OK, 0, 10), put("b", MAYBE_ANY_TIME, 12, 20), put("c", OK, 30, 40), get("b", 50, 60),
                delete(MAYBE_ANY_TIME, 61, 70), get(null, 80, 90)))).isEmpty();
    }

    @Test
    void a504WriteIsOrderedBeforeItsAnswer() {
        assertThat(HistoryChecker.check(List.of(
                put("b", MAYBE_BEFORE_ANSWER, 0, 10), put("c", OK, 20, 30), get("b", 40, 50))))
                .singleElement().asString().startsWith("stale read");
        // ... but may be seen, or not, while nothing newer was acknowledged.
        assertThat(HistoryChecker.check(List.of(
                put("a", OK, 0, 10), put("b", MAYBE_BEFORE_ANSWER, 20, 30), get("b", 40, 50), get("a", 60, 70)))).isEmpty();
    }

    @Test
    void absenceNeedsADeleteThatIsNotKnownOlder() {
        assertThat(HistoryChecker.check(List.of(
                put("a", OK, 0, 10), delete(MAYBE_BEFORE_ANSWER, 5, 15), get(null, 20, 30)))).isEmpty();
        assertThat(HistoryChecker.check(List.of(
                delete(OK, 0, 10), put("a", OK, 20, 30), get(null, 40, 50))))
                .singleElement().asString().startsWith("lost write");
    }

    @Test
    void phantomsAreCaught() {
        assertThat(HistoryChecker.check(List.of(get("never", 0, 10))))
                .singleElement().asString().startsWith("phantom");
        assertThat(HistoryChecker.check(List.of(get("a", 0, 10), put("a", OK, 20, 30))))
                .singleElement().asString().contains("before its put was sent");
        assertThat(HistoryChecker.check(List.of(put("a", NO_EFFECT, 0, 10), get("a", 20, 30))))
                .singleElement().asString().contains("had no effect");
    }

    @Test
    void skewedClocksMayOrderWritesAgainstRealTimeByTheirSpread() {
        // b was sent 20 ms after a was answered, through a node whose clock ran 50 ms behind a's.
        List<Op> ops = List.of(put("a", OK, 0, 10), put("b", OK, 30, 40), get("a", 50, 60));
        assertThat(HistoryChecker.check(ops)).singleElement().asString().startsWith("stale read");
        assertThat(HistoryChecker.check(ops, 50)).isEmpty();
        // Beyond the spread the order is known again, for deletes too.
        assertThat(HistoryChecker.check(List.of(put("a", OK, 0, 10), delete(OK, 80, 90), get("a", 100, 110)), 50))
                .singleElement().asString().startsWith("stale read");
        assertThat(HistoryChecker.check(List.of(delete(OK, 0, 10), put("a", OK, 80, 90), get(null, 100, 110)), 50))
                .singleElement().asString().startsWith("lost write");
    }

    @Test
    void valuesMustBeUnique() {
        assertThatThrownBy(() -> HistoryChecker.check(List.of(put("a", OK, 0, 10), put("a", OK, 20, 30))))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
