package io.kvorum.node.rebuild;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.rebuild.Rebuild.State;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/operations.md#replacing-a-disk: how a node decides, and keeps, whether it rebuilds. */
class RebuildTest {

    private static final Set<String> PEERS = Set.of("n2", "n3");

    @TempDir
    Path dir;

    private Rebuild open(boolean storeEmpty) throws IOException {
        return Rebuild.open("n1", dir, storeEmpty, true, () -> PEERS);
    }

    @Test
    void aNewStoreThatNoPeerRemembersServesOnceEveryPeerHasToldOrFailed() throws IOException {
        Rebuild r = open(true);
        assertThat(r.state()).isEqualTo(State.CHECKING);
        assertThat(r.refuseReads()).isTrue();

        r.answered("n2", "");
        assertThat(r.state()).as("n3 has not told yet").isEqualTo(State.CHECKING);
        r.unanswered("n3");

        assertThat(r.state()).isEqualTo(State.SERVING);
        assertThat(r.refuseReads()).isFalse();
        assertThat(open(false).state()).as("kept across a restart").isEqualTo(State.SERVING);
    }

    @Test
    void withNoPeerAnsweringItKeepsChecking() throws IOException {
        Rebuild r = open(true);

        r.unanswered("n2");
        r.unanswered("n3");

        assertThat(r.state()).isEqualTo(State.CHECKING);
    }

    @Test
    void aPeerThatRemembersAnotherIncarnationMakesItRebuildUntilRebuiltAcrossRestarts() throws IOException {
        Rebuild r = open(true);
        AtomicInteger told = new AtomicInteger();
        r.listen(told::incrementAndGet);

        r.unanswered("n3");
        r.answered("n2", "an-earlier-store");

        assertThat(r.state()).isEqualTo(State.REBUILDING);
        assertThat(told).hasValue(1);
        assertThat(r.refusal()).hasMessageContaining("rebuilding");

        Rebuild restarted = open(true); // killed before it took any record
        assertThat(restarted.state()).isEqualTo(State.REBUILDING);
        assertThat(restarted.own()).as("the same store").isEqualTo(r.own());
        AtomicInteger toldAgain = new AtomicInteger();
        restarted.listen(toldAgain::incrementAndGet);
        assertThat(toldAgain).as("a rebuild resumed at start").hasValue(1);

        restarted.rebuilt();
        assertThat(restarted.refuseReads()).isFalse();
        assertThat(open(false).state()).isEqualTo(State.SERVING);
    }

    @Test
    void aNodeRestartedWhileCheckingTakesANewIncarnation() throws IOException {
        String first = open(true).own();

        Rebuild again = open(true);

        assertThat(again.own()).isNotEqualTo(first);
        assertThat(again.state()).isEqualTo(State.CHECKING);
    }

    @Test
    void aStoreWithRecordsAndNoIncarnationYetIsTheNodesOwn() throws IOException {
        Rebuild r = open(false);

        assertThat(r.state()).isEqualTo(State.SERVING);
    }

    @Test
    void aNodeThatNeedsNoCheckServesAtOnce() throws IOException {
        Rebuild r = Rebuild.open("n1", dir, true, false, () -> PEERS);

        assertThat(r.state()).isEqualTo(State.SERVING);
    }

    @Test
    void peersAnswerTheIncarnationBeforeTheCurrentOneAsOftenAsAsked() throws IOException {
        Rebuild r = open(false);

        assertThat(r.seen("n2", "a")).as("first seen").isEmpty();
        assertThat(r.seen("n2", "a")).isEmpty();
        assertThat(r.seen("n2", "b")).as("a new store").isEqualTo("a");
        assertThat(r.seen("n2", "b")).as("asked again").isEqualTo("a");
        assertThat(r.seen("n2", "")).as("an older node names none").isEqualTo("b");
        assertThat(r.seen("n2", "x".repeat(PeerIncarnations.MAX_LENGTH + 1))).as("too long: ignored").isEqualTo("b");

        assertThat(open(false).seen("n2", "b")).as("kept across a restart").isEqualTo("a");
    }
}
