package io.kvorum.node.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.error.OverloadedException;
import org.junit.jupiter.api.Test;

/** Feeds the tracker one response at a time and checks its state after each (Ambry's OperationTrackerTest). */
class QuorumTrackerTest {

    private static final boolean SUCCESS = true;
    private static final boolean FAILURE = false;

    private static void assertState(QuorumTracker t, boolean succeeded, boolean failed, int successes, int pending) {
        assertThat(t.hasSucceeded()).as("hasSucceeded").isEqualTo(succeeded);
        assertThat(t.hasFailed()).as("hasFailed").isEqualTo(failed);
        assertThat(t.isDone()).as("isDone").isEqualTo(succeeded || failed);
        assertThat(t.successes()).as("successes").isEqualTo(successes);
        assertThat(t.pending()).as("pending").isEqualTo(pending);
    }

    @Test
    void twoOfThreeSucceedsAfterTwoSuccesses() {
        QuorumTracker t = new QuorumTracker(new Quorum(2, 3));
        // 0 success, 0 failure, 3 pending
        assertState(t, false, false, 0, 3);
        t.onResponse(SUCCESS);
        // 1 success, 0 failure, 2 pending: one more is needed
        assertState(t, false, false, 1, 2);
        t.onResponse(SUCCESS);
        // 2 successes: done, although one replica has not answered
        assertState(t, true, false, 2, 1);
        t.onResponse(FAILURE);
        // a late failure does not undo the success
        assertState(t, true, false, 2, 0);
    }

    @Test
    void twoOfThreeFailsAfterTwoFailures() {
        QuorumTracker t = new QuorumTracker(new Quorum(2, 3));
        t.onResponse(FAILURE);
        // 0 success, 1 failure, 2 pending: both pending could still succeed
        assertState(t, false, false, 0, 2);
        t.onResponse(FAILURE);
        // 0 success, 2 failures, 1 pending: at most 1 success is left, 2 are needed
        assertState(t, false, true, 0, 1);
    }

    @Test
    void twoOfThreeSucceedsAfterAFailureInBetween() {
        QuorumTracker t = new QuorumTracker(new Quorum(2, 3));
        t.onResponse(SUCCESS);
        // 1 success, 0 failure, 2 pending
        assertState(t, false, false, 1, 2);
        t.onResponse(FAILURE);
        // 1 success, 1 failure, 1 pending: the last replica decides
        assertState(t, false, false, 1, 1);
        t.onResponse(SUCCESS);
        // 2 successes
        assertState(t, true, false, 2, 0);
    }

    @Test
    void twoOfThreeFailsWhenTheLastOneFails() {
        QuorumTracker t = new QuorumTracker(new Quorum(2, 3));
        t.onResponse(SUCCESS);
        t.onResponse(FAILURE);
        // 1 success, 1 failure, 1 pending
        assertState(t, false, false, 1, 1);
        t.onResponse(FAILURE);
        // 1 success, 2 failures: out of reach
        assertState(t, false, true, 1, 0);
    }

    @Test
    void oneOfOneSucceedsOnItsSuccess() {
        QuorumTracker t = new QuorumTracker(new Quorum(1, 1));
        assertState(t, false, false, 0, 1);
        t.onResponse(SUCCESS);
        assertState(t, true, false, 1, 0);
    }

    @Test
    void oneOfOneFailsOnItsFailure() {
        QuorumTracker t = new QuorumTracker(new Quorum(1, 1));
        t.onResponse(FAILURE);
        assertState(t, false, true, 0, 0);
    }

    @Test
    void threeOfThreeFailsOnTheFirstFailure() {
        QuorumTracker t = new QuorumTracker(new Quorum(3, 3));
        t.onResponse(SUCCESS);
        t.onResponse(SUCCESS);
        // 2 successes, 1 pending: all three are needed
        assertState(t, false, false, 2, 1);

        QuorumTracker u = new QuorumTracker(new Quorum(3, 3));
        u.onResponse(FAILURE);
        // 0 success, 1 failure, 2 pending: already out of reach
        assertState(u, false, true, 0, 2);
    }

    @Test
    void threeOfThreeSucceedsOnlyWithAllThree() {
        QuorumTracker t = new QuorumTracker(new Quorum(3, 3));
        t.onResponse(SUCCESS);
        t.onResponse(SUCCESS);
        t.onResponse(SUCCESS);
        assertState(t, true, false, 3, 0);
    }

    @Test
    void oneOfThreeSurvivesTwoFailures() {
        QuorumTracker t = new QuorumTracker(new Quorum(1, 3));
        t.onResponse(FAILURE);
        t.onResponse(FAILURE);
        // 0 success, 2 failures, 1 pending: one success is all it takes
        assertState(t, false, false, 0, 1);
        t.onResponse(SUCCESS);
        assertState(t, true, false, 1, 0);
    }

    @Test
    void theFailureSaysHowManyAnsweredFailedAndWereStillPending() {
        QuorumTracker t = new QuorumTracker(new Quorum(3, 3));
        t.onResponse(FAILURE);

        // Failing fast: the two live replicas may still answer, and apply the write.
        assertThat(t.failure("too many replicas failed", null))
                .isInstanceOf(NotEnoughReplicasException.class)
                .hasMessage("too many replicas failed: 0 of the 3 required replicas (ack=3, from=3) answered, "
                        + "1 failed, 2 had not answered yet");

        QuorumTracker done = new QuorumTracker(new Quorum(2, 3));
        done.onResponse(SUCCESS);
        done.onResponse(FAILURE);
        done.onResponse(FAILURE);
        assertThat(done.failure("too many replicas failed", null))
                .hasMessage("too many replicas failed: 1 of the 2 required replicas (ack=2, from=3) answered, 2 failed");
    }

    @Test
    void aRefusalForOverloadWithNoSuccessIsA503NamingTheReplicaAndItsReason() {
        QuorumTracker t = new QuorumTracker(new Quorum(1, 1));
        t.onResponse(FAILURE);
        String overload = QuorumTracker.overload("n1", new OverloadedException("the data disk is full"));

        assertThat(t.failure("too many replicas failed", overload)).isInstanceOf(OverloadedException.class)
                .hasMessage("replicas are overloaded (n1: the data disk is full)");

        QuorumTracker someTookIt = new QuorumTracker(new Quorum(2, 2));
        someTookIt.onResponse(SUCCESS);
        someTookIt.onResponse(FAILURE);
        assertThat(someTookIt.failure("too many replicas failed", overload))
                .as("a replica took it: the request may have had an effect").isInstanceOf(NotEnoughReplicasException.class);
    }

    @Test
    void moreResponsesThanFromIsABug() {
        QuorumTracker t = new QuorumTracker(new Quorum(2, 3));
        t.onResponse(SUCCESS);
        t.onResponse(SUCCESS);
        t.onResponse(SUCCESS);
        assertThatThrownBy(() -> t.onResponse(SUCCESS)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> t.onResponse(FAILURE)).isInstanceOf(IllegalStateException.class);
        // the refused responses were not counted
        assertState(t, true, false, 3, 0);
    }

    @Test
    void quorumRejectsImpossibleCombinations() {
        assertThatThrownBy(() -> new Quorum(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Quorum(3, 2)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void majorityOfFromIsTheDefaultAck() {
        assertThat(Quorum.majorityOf(1)).isEqualTo(new Quorum(1, 1));
        assertThat(Quorum.majorityOf(2)).isEqualTo(new Quorum(2, 2));
        assertThat(Quorum.majorityOf(3)).isEqualTo(new Quorum(2, 3));
        assertThat(Quorum.majorityOf(4)).isEqualTo(new Quorum(3, 4));
        assertThat(Quorum.majorityOf(5)).isEqualTo(new Quorum(3, 5));
    }
}
