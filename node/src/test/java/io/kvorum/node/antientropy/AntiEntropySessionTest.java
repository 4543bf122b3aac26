package io.kvorum.node.antientropy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.Placement;
import io.kvorum.node.model.Entry;
import io.kvorum.testkit.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The record exchange that both sides of a round share, driven on a stream the test holds. */
class AntiEntropySessionTest {

    private static final int FANOUT_BITS = 4;
    private static final int DEPTH = 2;

    @TempDir
    Path dir;
    private RepairFixture node;

    @AfterEach
    void close() throws Exception {
        if (node != null) {
            node.close();
        }
    }

    /** The part of a session under test: it sends the records of every bucket and never ends by itself. */
    private static final class SendingSession extends AntiEntropySession {
        SendingSession(RepairFixture node, RecordFlow flow) {
            super("n2", new RepairScope(new Placement(RepairFixture.topology()), 3, node.id, "n2"), FANOUT_BITS, DEPTH,
                    node.repair, flow, node.executor, node.executor, Duration.ofSeconds(20));
        }

        void startSendingAll(AntiEntropyStream stream) {
            BitSet all = new BitSet();
            all.set(0, 1 << (FANOUT_BITS * DEPTH));
            inSession(() -> {
                bind(stream);
                startSending(all);
            });
        }

        @Override
        protected void handle(AntiEntropyMessage message) {
        }

        @Override
        protected boolean peerMayCloseNow() {
            return false;
        }

        @Override
        protected void onSentDone() {
        }

        @Override
        protected void maybeFinish() {
        }
    }

    /** A stream that takes messages while {@link #ready}. */
    private static final class HeldStream implements AntiEntropyStream {
        final List<AntiEntropyMessage> sent = new CopyOnWriteArrayList<>();
        volatile boolean ready = true;

        @Override
        public boolean isReady() {
            return ready;
        }

        @Override
        public void send(AntiEntropyMessage message) {
            sent.add(message);
            if (message instanceof AntiEntropyMessage.Records) {
                ready = false; // one message of records, then the peer is slow
            }
        }

        @Override
        public void request(int count) {
        }

        @Override
        public void complete() {
        }

        @Override
        public void abort(RepairException error) {
        }
    }

    @Test
    void recordsAreCountedAsTheyAreSentNotWhenTheRoundEnds() throws Exception {
        node = new RepairFixture(dir, "n1", 3, FANOUT_BITS, DEPTH);
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            entries.add(new Entry(RepairFixture.key("k" + i), RepairFixture.value(1000 + i, "n1", "v" + i)));
        }
        node.putAll(entries);
        List<Integer> flowed = new CopyOnWriteArrayList<>();
        SendingSession session = new SendingSession(node, new AntiEntropySession.RecordFlow() {
            @Override
            public void sent(int records) {
                flowed.add(records);
            }

            @Override
            public void received(int records) {
                flowed.add(-records);
            }
        });
        HeldStream stream = new HeldStream();

        session.startSendingAll(stream);
        Await.until("the records sent to flow", Duration.ofSeconds(10), () -> !flowed.isEmpty());

        assertThat(stream.sent).as("one message of records sent while the stream was ready").hasSize(1);
        int inMessage = ((AntiEntropyMessage.Records) stream.sent.get(0)).entries().size();
        assertThat(inMessage).isPositive();
        assertThat(flowed).containsExactly(inMessage);
        assertThat(session.result()).as("the round goes on").isNotDone();
    }
}
