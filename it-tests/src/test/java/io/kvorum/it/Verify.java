package io.kvorum.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.testkit.History.Op;
import io.kvorum.testkit.History.Outcome;
import io.kvorum.testkit.History.Type;
import io.kvorum.testkit.History;
import io.kvorum.testkit.HistoryChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** The checks that end the scenarios: final quorum reads, recorded and judged. */
final class Verify {

    private static final int READERS = 8;

    private Verify() {
    }

    /**
     * Reads every key once through the nodes in turn, with the default quorum, recording the reads
     * in {@code history} (client id -1). Every read must succeed: the cluster is whole again.
     */
    static void finalReads(KvorumCluster cluster, History history, List<String> keys) {
        List<ClusterNode> nodes = cluster.nodes();
        List<KvorumClient> clients = nodes.stream().map(n -> n.client(Duration.ofSeconds(10))).toList();
        ExecutorService pool = Executors.newFixedThreadPool(READERS);
        try {
            List<Future<Op>> reads = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                int n = i % nodes.size();
                String key = keys.get(i);
                reads.add(pool.submit(() -> history.perform(-1, nodes.get(n).id(), clients.get(n), Type.GET, key, null)));
            }
            List<Op> failed = new ArrayList<>();
            for (Future<Op> f : reads) {
                Op op = f.get(60, TimeUnit.SECONDS);
                if (op.outcome() != Outcome.OK) {
                    failed.add(op);
                }
            }
            assertThat(failed).as("final reads of a whole cluster that failed").isEmpty();
        } catch (Exception e) {
            throw new AssertionError("final reads did not complete: " + e, e);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Every key that any op of the history touched, in first-seen order. */
    static List<String> keys(History history) {
        return history.ops().stream().map(Op::key).distinct().toList();
    }

    /**
     * For histories where each key is put at most once: every acknowledged put is read back with
     * its value by the final reads (client -1). Returns the number of acknowledged puts.
     */
    static long everyAcknowledgedPutSurvived(History history) {
        List<Op> ops = history.ops();
        java.util.Map<String, Op> lastFinalRead = new java.util.HashMap<>();
        ops.stream().filter(o -> o.client() == -1 && o.type() == Type.GET).forEach(o -> lastFinalRead.put(o.key(), o));
        List<String> lost = new ArrayList<>();
        long ackedPuts = 0;
        for (Op put : ops) {
            if (put.type() == Type.PUT && put.isAcked()) {
                ackedPuts++;
                Op read = lastFinalRead.get(put.key());
                if (read == null || !Objects.equals(read.value(), put.value())) {
                    lost.add(put + " -> final read " + read);
                }
            }
        }
        assertThat(lost).as("acknowledged writes lost (of %d acknowledged)", ackedPuts).isEmpty();
        return ackedPuts;
    }

    /** Zero violations of {@link HistoryChecker}'s rule. */
    static void noViolations(History history) {
        List<String> violations = HistoryChecker.check(history.ops());
        assertThat(violations).as("history violations in %s", history.summary()).isEmpty();
    }
}
