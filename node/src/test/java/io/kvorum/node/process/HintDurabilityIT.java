package io.kvorum.node.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.NodeJvm;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * docs/operations.md#how-replicas-converge, hinted handoff: "a write that could not reach a replica is kept durably by the
 * coordinator (a graceful stop writes every hint it holds; none is dropped for shutting down) and
 * delivered within 5 seconds of that replica answering again, with or without client traffic,
 * also after the coordinator itself restarted" (issue 12: a hint taken just before SIGTERM was
 * dropped "for shutting down", and the value never reached the replica).
 *
 * <p>Two nodes, anti-entropy off, so that only the hint can carry the value. n1 is down (it has
 * not run yet) when n2 starts, so n2 is a coordinator that has never talked to n1. A PUT with
 * {@code ack=1&from=2} through n2 is acknowledged by n2 alone and leaves a hint for n1; n2 gets
 * SIGTERM shortly after and must exit 0. Then both come back, and without any entity request
 * that involves n2, the value must be on n1 within 5 s.
 *
 * <p>The SIGTERM delays matter because a fresh coordinator's first attempt to reach n1 takes a
 * while to fail (its channel to n1 is set up by that very write): a hint that is still to be taken
 * when the stop begins is what issue 12 lost. At 0 ms that is nearly always the case; the later
 * delays check the same contract once the attempt has failed.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class HintDurabilityIT {

    /** docs/operations.md#how-replicas-converge: a hint is delivered within 5 s of its replica answering again. */
    private static final Duration DELIVERY = Duration.ofSeconds(5);
    private static final int N1 = 0;
    private static final int N2 = 1;
    /**
     * How long the hints of {@link #ACKED_BEFORE_KILL} writes may take to arrive: a lost hint never
     * does, so the bound is generous (on a loaded machine, delivering 300 took over 7 s); how soon
     * delivery starts is the other tests' concern.
     */
    private static final Duration ALL_DELIVERED = Duration.ofSeconds(60);
    private static final int WRITERS = 8;
    private static final int ACKED_BEFORE_KILL = 300;

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    private final Http http = new Http();

    @ParameterizedTest(name = "SIGTERM {0} ms after the write")
    @ValueSource(ints = {0, 100, 500})
    void hintTakenJustBeforeSigtermReachesTheReplicaWhenBothComeBack(int sigtermDelayMillis) {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 2, "--anti-entropy-interval", "0");
        Hinted hinted = writeHintThenStopTheCoordinator(cluster, sigtermDelayMillis);

        cluster.startAllReady(N1, N2);
        awaitOnN1(cluster, hinted, "n1 and n2 started together");
    }

    /** The replica answers again while the coordinator that holds its hint is still down. */
    @ParameterizedTest(name = "SIGTERM {0} ms after the write")
    @ValueSource(ints = {0, 100, 500})
    void hintTakenJustBeforeSigtermReachesTheReplicaThatCameBackFirst(int sigtermDelayMillis) {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 2, "--anti-entropy-interval", "0");
        Hinted hinted = writeHintThenStopTheCoordinator(cluster, sigtermDelayMillis);

        cluster.startReady(N1);
        cluster.startReady(N2);
        awaitOnN1(cluster, hinted, "n1 started and ready first, then n2");
    }

    /**
     * docs/operations.md#hinted-handoff: with {@code --fsync}, a hint made before the answer is
     * written and fsynced before the answer, so a coordinator killed (SIGKILL) right after its
     * answers still delivers them once back. n2 coordinates while it knows n1 down, so every write
     * fails on n1 at once, before the answer; writers keep writing while n2 is killed as soon as
     * {@link #ACKED_BEFORE_KILL} writes were acknowledged. Every write acknowledged before the kill
     * must reach n1 after both restart (a hint still queued at the SIGKILL included).
     */
    @Test
    void hintsOfWritesAnsweredBeforeASigkillReachTheReplicaWhenBothComeBack() throws Exception {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), 2, "--anti-entropy-interval", "0",
                "--fsync");
        cluster.startReady(N2);
        awaitN1KnownDown(cluster);
        List<String> keys = keysWhoseFirstReplicaIsN1(cluster, 5_000);
        Set<String> acked = ConcurrentHashMap.newKeySet();
        CountDownLatch enough = new CountDownLatch(ACKED_BEFORE_KILL);
        AtomicInteger next = new AtomicInteger();
        AtomicBoolean killed = new AtomicBoolean();
        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        try {
            for (int w = 0; w < WRITERS; w++) {
                writers.execute(() -> {
                    int i;
                    while (!killed.get() && (i = next.getAndIncrement()) < keys.size()) {
                        String key = keys.get(i);
                        try {
                            HttpResponse<String> put = http.client().send(HttpRequest.newBuilder(
                                    cluster.entity(N2, key, "ack=1&from=2")).timeout(Duration.ofSeconds(10))
                                    .PUT(HttpRequest.BodyPublishers.ofString(valueOf(key))).build(),
                                    HttpResponse.BodyHandlers.ofString());
                            if (put.statusCode() == 201) {
                                acked.add(key);
                                enough.countDown();
                            }
                        } catch (IOException e) {
                            return; // n2 was killed: no answer, nothing acknowledged
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                });
            }
            assertThat(enough.await(2, TimeUnit.MINUTES)).as("%d writes acknowledged through n2 (%d so far)",
                    ACKED_BEFORE_KILL, acked.size()).isTrue();
            cluster.process(N2).kill();
            killed.set(true);
            assertThat(cluster.process(N2).awaitExit(NodeJvm.KILL_TIMEOUT)).as("n2's exit after SIGKILL").isNotZero();
        } finally {
            writers.shutdown();
            assertThat(writers.awaitTermination(1, TimeUnit.MINUTES)).isTrue();
        }

        cluster.startAllReady(N1, N2);
        Set<String> missing = ConcurrentHashMap.newKeySet();
        missing.addAll(acked);
        Await.until(String.format("n1 to hold each of the %d writes acknowledged by n2 (ack=1&from=2, --fsync, n1 "
                        + "down) before n2 was killed, within %d ms of both being ready", acked.size(),
                        ALL_DELIVERED.toMillis()),
                ALL_DELIVERED,
                () -> {
                    missing.removeIf(key -> {
                        HttpResponse<String> r = send(HttpRequest.newBuilder(cluster.entity(N1, key, "ack=1&from=1"))
                                .timeout(Duration.ofSeconds(2)).GET().build());
                        return r.statusCode() == 200 && r.body().equals(valueOf(key));
                    });
                    return missing.isEmpty();
                },
                () -> missing.size() + " still missing on n1, e.g. " + missing.stream().limit(5).toList()
                        + "\nwhat n2 logged about hints:\n" + hintLog(cluster));
    }

    private static String valueOf(String key) {
        return "hinted value of " + key;
    }

    /** Polls n2's {@code GET /v0/status} until it shows n1 {@code down}: writes to n1 then fail at once. */
    private void awaitN1KnownDown(ProcessCluster cluster) {
        AtomicReference<String> last = new AtomicReference<>("no answer yet");
        HttpRequest status = HttpRequest.newBuilder(URI.create(NodeJvm.loopbackUri(cluster.http(N2)) + "/v0/status"))
                .timeout(Duration.ofSeconds(2)).GET().build();
        Await.until("n2 to show n1 down in GET /v0/status", Duration.ofSeconds(30), () -> {
            String body = send(status).body();
            last.set(body);
            return body.contains("\"n1\":{\"state\":\"down\"");
        }, last::get);
    }

    /** The write that n1 missed, and how it was made. */
    private record Hinted(String key, String value, long putMillis, int sigtermDelayMillis) {
    }

    private Hinted writeHintThenStopTheCoordinator(ProcessCluster cluster, int sigtermDelayMillis) {
        cluster.startReady(N2);
        String key = keyWhoseFirstReplicaIsN1(cluster);
        String value = "hinted value of " + key;
        long sentAt = System.nanoTime();
        HttpResponse<String> put = send(HttpRequest.newBuilder(cluster.entity(N2, key, "ack=1&from=2"))
                .PUT(HttpRequest.BodyPublishers.ofString(value)));
        long putMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt);
        assertThat(put.statusCode()).as("PUT ack=1&from=2 through n2 while n1 is down: %s", put.body()).isEqualTo(201);

        Await.pause(sigtermDelayMillis); // the delay between the write and SIGTERM is the scenario
        cluster.stop(N2);
        return new Hinted(key, value, putMillis, sigtermDelayMillis);
    }

    /**
     * Polls n1 alone until it holds the value, for at most {@link #DELIVERY} from now (both nodes
     * are ready). {@code ack=1&from=1} asks only the key's first replica, which is n1: the answer is
     * n1's own copy, and the read involves n2 in no way (no read repair, no coordinator traffic).
     */
    private void awaitOnN1(ProcessCluster cluster, Hinted hinted, String howTheyCameBack) {
        AtomicReference<String> last = new AtomicReference<>("no answer yet");
        HttpRequest get = HttpRequest.newBuilder(cluster.entity(N1, hinted.key, "ack=1&from=1"))
                .timeout(Duration.ofSeconds(2)).GET().build();
        Await.until(String.format("n1 to hold %s (PUT ack=1&from=2 through a fresh n2 while n1 was down: 201 in "
                        + "%d ms; SIGTERM to n2 %d ms later: exit 0; then %s) within %d ms of both being ready, "
                        + "read with GET ack=1&from=1 through n1 (n1 is the key's first replica)",
                        hinted.key, hinted.putMillis, hinted.sigtermDelayMillis, howTheyCameBack, DELIVERY.toMillis()),
                DELIVERY,
                () -> {
                    HttpResponse<String> r = send(get);
                    last.set(r.statusCode() + " \"" + r.body().strip() + "\"");
                    return r.statusCode() == 200 && r.body().equals(hinted.value);
                },
                () -> "last answer: " + last.get() + "\nwhat n2 logged about hints:\n" + hintLog(cluster));
    }

    /** The lines of every n2 process's log that mention hints. */
    private static String hintLog(ProcessCluster cluster) {
        return cluster.processes(N2).stream()
                .flatMap(p -> Stream.concat(Stream.of("-- " + p), p.stdout().lines()
                        .filter(l -> l.toLowerCase().contains("hint"))))
                .collect(Collectors.joining("\n"));
    }

    /**
     * A key whose first replica is n1, by the node's own placement (a function of the node ids
     * alone, docs/operations.md#how-replicas-converge), so that a read with {@code from=1} through n1 answers from n1's copy.
     */
    private static String keyWhoseFirstReplicaIsN1(ProcessCluster cluster) {
        return keysWhoseFirstReplicaIsN1(cluster, 1).get(0);
    }

    /** {@code count} keys whose first replica is n1, as {@link #keyWhoseFirstReplicaIsN1}. */
    private static List<String> keysWhoseFirstReplicaIsN1(ProcessCluster cluster, int count) {
        Placement placement;
        try {
            placement = new Placement(Topology.parse(cluster.spec()));
        } catch (InvalidTopologyException e) {
            throw new AssertionError(e);
        }
        return IntStream.range(0, 100 * count).mapToObj(i -> "hinted-" + i)
                .filter(k -> placement.replicasFor(k.getBytes(StandardCharsets.UTF_8), 1).get(0).id().equals("n1"))
                .limit(count).toList();
    }

    private HttpResponse<String> send(HttpRequest.Builder request) {
        return http.send(request);
    }

    private HttpResponse<String> send(HttpRequest request) {
        return http.send(request);
    }
}
