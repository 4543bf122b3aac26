package io.kvorum.node.process;

import io.kvorum.testkit.Await;
import static io.kvorum.node.process.ProcessCluster.id;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * docs/operations.md#how-replicas-converge, liveness: "a node that restarts is served by its peers as soon as its GET /v0/status
 * answers 200; a request whose replicas are all up never fails because one of them was down a
 * moment ago" (issue 12: the coordinator's channel to the restarted peer was still in reconnect
 * backoff, and the first requests after its return answered 504).
 *
 * <p>A few workers keep a steady, paced stream of {@code ack=from=N} requests (N = cluster size,
 * so every request needs every node) going through the nodes that are not being restarted: PUTs
 * of new keys, and GETs of keys that an earlier PUT wrote with {@code ack=from=N}, so that a GET
 * must answer 200 with exactly that value. One node at a time is stopped (SIGTERM), left down,
 * started again, and the instant its {@code /v0/status} first answers 200 is recorded. Every
 * request sent after that instant must succeed; requests sent while it was down may fail and are
 * not checked, nor are those answered after the next node's SIGTERM (that stop may fail them).
 * Anti-entropy is off, so that no background round is what wakes a channel up.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PeerLivenessIT {

    /** The outage that the reconnect backoff of a peer channel has barely started on. */
    private static final Duration SHORT_OUTAGE = Duration.ofSeconds(1);
    /** An outage long enough for the backoff to have grown to many seconds. */
    private static final Duration LONG_OUTAGE = Duration.ofSeconds(20);
    /**
     * How long the traffic is watched after the restarted node is ready, before the next node is
     * stopped: several request timeouts and backoff resets, so that a peer that is noticed late
     * shows up as failures.
     */
    private static final Duration WATCHED_AFTER_READY = Duration.ofSeconds(3);
    /** At least this many requests must be checked after each restart, or the test proved nothing. */
    private static final int MIN_CHECKED_PER_RESTART = 50;
    private static final int WORKERS = 4;
    /** Each worker's pause between the end of one request and the start of the next. */
    private static final Duration PACE = Duration.ofMillis(20);
    /** A bound on the whole stream: the pace gives at most about WORKERS / PACE per second. */
    private static final int MAX_REQUESTS = 40_000;
    /** Far above the node's request timeout (1 s): a request not answered by then hangs. */
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration ANSWERS = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @RegisterExtension
    final NodeProcesses nodes = new NodeProcesses(() -> tmp);

    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void eachNodeRestartedAfterAShortOutageIsServedAsSoonAsItIsReady(int size) {
        restartInTurn(size, IntStream.range(0, size).toArray(), SHORT_OUTAGE);
    }

    /** One node only: the outage itself takes the time. */
    @ParameterizedTest(name = "{0} nodes")
    @ValueSource(ints = {2, 3})
    void nodeRestartedAfterALongOutageIsServedAsSoonAsItIsReady(int size) {
        restartInTurn(size, new int[] {0}, LONG_OUTAGE);
    }

    private void restartInTurn(int size, int[] restarted, Duration outage) {
        ProcessCluster cluster = new ProcessCluster(nodes, tmp.resolve("data"), size, "--anti-entropy-interval", "0");
        cluster.startAllReady();
        Traffic traffic = new Traffic(cluster, "live-" + size + "n-" + outage.toSeconds() + "s");
        // The cold start is ColdStartIT's subject: here the stream starts once every node has served
        // one request that needs all of them.
        for (int node = 0; node < size; node++) {
            traffic.awaitOnePutThrough(node);
        }
        traffic.start();
        List<Restart> restarts = new ArrayList<>();
        try {
            for (int node : restarted) {
                traffic.avoid(node);
                long stoppedAt = System.nanoTime();
                if (!restarts.isEmpty()) {
                    restarts.get(restarts.size() - 1).nextStopAt = stoppedAt;
                }
                cluster.stop(node);
                sleep(outage); // the outage is the scenario, not a stand-in for a condition
                // awaitReady polls every 20 ms and returns on the first 200: this is that instant, give or
                // take the poll's own latency.
                cluster.startReady(node);
                Restart restart = new Restart(node, System.nanoTime());
                restarts.add(restart);
                sleep(WATCHED_AFTER_READY); // the observation period, see its comment
                Await.until(MIN_CHECKED_PER_RESTART + " requests sent after " + id(node) + " was ready answered",
                        ANSWERS, () -> traffic.answeredSince(restart.readyAt) >= MIN_CHECKED_PER_RESTART,
                        () -> traffic.outcomes().size() + " requests answered in all");
            }
        } finally {
            traffic.stop();
        }

        List<String> problems = new ArrayList<>();
        for (Restart r : restarts) {
            List<Outcome> checked = traffic.outcomes().stream()
                    .filter(o -> o.sentAt >= r.readyAt && o.answeredAt < r.nextStopAt)
                    .sorted(Comparator.comparingLong(Outcome::sentAt))
                    .toList();
            List<Outcome> failed = checked.stream().filter(o -> o.problem != null).toList();
            if (!failed.isEmpty()) {
                problems.add(String.format("%s, restarted after %d ms down: %d of the %d requests sent after its "
                                + "/v0/status first answered 200 failed, sent from %+d to %+d ms after that; "
                                + "the first ones:%n  %s",
                        id(r.node), outage.toMillis(), failed.size(), checked.size(),
                        failed.get(0).sinceMillis(r.readyAt), failed.get(failed.size() - 1).sinceMillis(r.readyAt),
                        failed.stream().limit(10).map(o -> o.describe(r.readyAt)).collect(Collectors.joining("\n  "))));
            }
        }
        assertThat(problems)
                .as("%d-node cluster, anti-entropy off, traffic with ack=from=%d through the other nodes "
                        + "(%d requests in all)", size, size, traffic.outcomes().size())
                .isEmpty();
        assertThat(traffic.capReached()).as("the stream stopped at its cap of %d requests", MAX_REQUESTS).isFalse();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** One restart: the node and the instant its /v0/status first answered 200 (System.nanoTime). */
    private static final class Restart {
        final int node;
        final long readyAt;
        /** When the next node was sent SIGTERM; requests answered after it are not checked. */
        volatile long nextStopAt = Long.MAX_VALUE;

        Restart(int node, long readyAt) {
            this.node = node;
            this.readyAt = readyAt;
        }
    }

    /** One request: what, through which node, when sent and answered (System.nanoTime), and what went wrong. */
    private record Outcome(String method, String key, String via, long sentAt, long answeredAt, String problem) {
        long sinceMillis(long readyAt) {
            return TimeUnit.NANOSECONDS.toMillis(sentAt - readyAt);
        }

        String describe(long readyAt) {
            return String.format("%s id=%s via %s, sent %+d ms after ready, answered in %d ms: %s", method, key, via,
                    sinceMillis(readyAt), TimeUnit.NANOSECONDS.toMillis(answeredAt - sentAt), problem);
        }
    }

    /**
     * The request stream. Each worker, every {@link #PACE}, sends one request through a node other
     * than the one being restarted, taking turns among them: a PUT of a new key, or a GET of a key
     * acknowledged earlier. All with {@code ack=from=N}.
     */
    private static final class Traffic {
        private final ProcessCluster cluster;
        private final String prefix;
        private final String quorum;
        private final ScheduledExecutorService workers =
                Executors.newScheduledThreadPool(WORKERS, r -> {
                    Thread t = new Thread(r, "liveness-traffic");
                    t.setDaemon(true);
                    return t;
                });
        private final Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
        private final List<String> acknowledgedKeys = new CopyOnWriteArrayList<>();
        private final Map<String, String> acknowledged = new ConcurrentHashMap<>();
        private final AtomicInteger sequence = new AtomicInteger();
        private final AtomicInteger sent = new AtomicInteger();
        private volatile Phase phase;

        /**
         * The node the stream avoids and the client it uses. Each phase has a new client, so that
         * no connection pooled before a node's restart is reused after it.
         */
        private record Phase(int avoided, HttpClient client) {
        }

        Traffic(ProcessCluster cluster, String prefix) {
            this.cluster = cluster;
            this.prefix = prefix;
            this.quorum = "ack=" + cluster.size() + "&from=" + cluster.size();
            this.phase = new Phase(-1, newClient());
        }

        private static HttpClient newClient() {
            return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(2)).build();
        }

        /** Before the stream: a PUT through {@code node} that every node acknowledges, retried until it is. */
        void awaitOnePutThrough(int node) {
            Await.until("a PUT with " + quorum + " through " + id(node) + " to succeed", ANSWERS,
                    () -> send(node, phase.client, "PUT", prefix + "/warm-up-" + id(node)).problem == null);
        }

        void start() {
            for (int w = 0; w < WORKERS; w++) {
                Random random = new Random(w);
                AtomicInteger turn = new AtomicInteger(w);
                workers.scheduleWithFixedDelay(() -> step(random, turn), 0, PACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        }

        /** From now on, sends through every node but {@code node}, with a new client. */
        void avoid(int node) {
            phase = new Phase(node, newClient());
        }

        private void step(Random random, AtomicInteger turn) {
            if (sent.incrementAndGet() > MAX_REQUESTS) {
                return;
            }
            Phase p = phase;
            int[] via = IntStream.range(0, cluster.size()).filter(i -> i != p.avoided).toArray();
            int node = via[Math.floorMod(turn.getAndIncrement(), via.length)];
            List<String> readable = acknowledgedKeys;
            if (readable.isEmpty() || random.nextBoolean()) {
                send(node, p.client, "PUT", String.format("%s/%06d", prefix, sequence.getAndIncrement()));
            } else {
                send(node, p.client, "GET", readable.get(random.nextInt(readable.size())));
            }
        }

        /** Sends one request, records its outcome and returns it; never throws. */
        private Outcome send(int node, HttpClient client, String method, String key) {
            String value = key + "|" + System.nanoTime(); // sent by a PUT only
            HttpRequest.Builder request = HttpRequest.newBuilder(cluster.entity(node, key, quorum))
                    .timeout(CLIENT_TIMEOUT);
            request = method.equals("PUT")
                    ? request.PUT(HttpRequest.BodyPublishers.ofString(value))
                    : request.GET();
            long sentAt = System.nanoTime();
            String problem;
            try {
                HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
                problem = check(method, key, value, response);
            } catch (IOException e) {
                problem = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                problem = "interrupted";
            } catch (RuntimeException e) {
                problem = e.toString();
            }
            Outcome outcome = new Outcome(method, key, id(node), sentAt, System.nanoTime(), problem);
            outcomes.add(outcome);
            return outcome;
        }

        /** Null when the answer is right; else what was wrong with it. */
        private String check(String method, String key, String value, HttpResponse<String> response) {
            int status = response.statusCode();
            if (method.equals("PUT")) {
                if (status != 201) {
                    return status + " \"" + response.body().strip() + "\"";
                }
                acknowledged.put(key, value);
                acknowledgedKeys.add(key);
                return null;
            }
            String expected = acknowledged.get(key);
            if (status != 200) {
                return status + " \"" + response.body().strip() + "\"";
            }
            if (!response.body().equals(expected)) {
                return "200 with \"" + response.body() + "\", expected \"" + expected + "\"";
            }
            return null;
        }

        /** Requests sent at or after {@code since} that have been answered. */
        long answeredSince(long since) {
            return outcomes.stream().filter(o -> o.sentAt >= since).count();
        }

        List<Outcome> outcomes() {
            return List.copyOf(outcomes);
        }

        boolean capReached() {
            return sent.get() > MAX_REQUESTS;
        }

        /** Stops the workers and waits for the requests in flight (each bounded by the client timeout). */
        void stop() {
            workers.shutdown();
            try {
                if (!workers.awaitTermination(CLIENT_TIMEOUT.toMillis() + 5_000, TimeUnit.MILLISECONDS)) {
                    workers.shutdownNow();
                    throw new AssertionError("the traffic workers did not stop");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }
}
