package io.kvorum.node.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.RangeReader;
import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import io.kvorum.node.cluster.MiniCluster.NodeLauncher;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.storage.LocalEntryStream;
import io.kvorum.node.transport.grpc.RangeService;
import io.kvorum.node.transport.memory.SimulatedNetwork;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Cluster-wide range reads (docs/http-api.md (ranges)): whichever node is asked, a range merges every node's keys,
 * keeps the newest version of each, drops deleted and expired ones, survives fewer than RF nodes
 * down and answers 504 before any chunk with RF down; it streams in bounded memory, holding the
 * nodes back while its client is slow, and a client that leaves ends every node's stream and
 * scan.
 *
 * <p>Keys are written with {@code from} below the cluster size, so that no single node holds all
 * of them and only a merge can answer. {@link LocalEntryStream#openStreams()} and
 * {@link RangeService#activeScans()} count the storage streams and the scans served to peers,
 * across every node of this JVM.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
abstract class RangeScenarios extends ClusterScenarioSupport {

    /** How long a released range may take to end its streams and scans, or an expiry to show. */
    private static final Duration WAIT_BOUND = Duration.ofSeconds(15);
    /** The large range: 8,000 values of 4 KiB (32 MiB), each on two of the three nodes (64 MiB stored). */
    private static final int LARGE_ENTRIES = 8_000;
    private static final int VALUE_BYTES = 4096;
    /**
     * How far, in entries read from storage across the nodes, the nodes may get ahead of a slow
     * client: a third of the 16,000 entries (64 MiB) a full read takes from storage. Measured, a
     * paused client has about 2,300 entries (9 MiB) read for it: a storage batch per node and a
     * gRPC flow-control window per peer (about 2.5 MiB), and on the HTTP side the kernel's send
     * buffer, which Linux grows up to 4 MiB on loopback, counted twice as each key is on two nodes.
     */
    private static final long READ_AHEAD_BOUND = 2 * LARGE_ENTRIES / 3;
    /** The large range's clusters wait long for a batch: a stall of this noisy machine is no failure. */
    private static final Map<NodeOption, String> PATIENT = Map.of(NodeOption.REQUEST_TIMEOUT, "5000");

    RangeScenarios(NodeLauncher launcher) {
        super(launcher);
    }

    @BeforeEach
    void noRangeLeftFromEarlierTests() {
        awaitUntil(() -> LocalEntryStream.openStreams() == 0 && servedScans() == 0,
                "no range stream or scan is left from an earlier test");
    }

    /**
     * Per leading node: a key on it alone, one on it and the next, one overwritten on it alone (its
     * second replica keeps the old value), and one deleted on it alone (its second replica keeps the
     * value). The stale copies sit on different nodes, so a merge that preferred any node would fail.
     */
    @Test
    void aRangeThroughAnyNodeHasEveryNodesKeysInTheirNewestVersion() throws Exception {
        withCluster(3, c -> {
            Map<String, String> expected = new TreeMap<>();
            for (String lead : c.ids()) {
                String alone = c.keyWhosePreferenceStartsWith("rg-alone-" + lead + "-", List.of(lead));
                assertThat(put(c, lead, alone, "only-on-" + lead, q(1, 1)).status()).isEqualTo(Answer.CREATED);
                expected.put(alone, "only-on-" + lead);

                String pair = c.keyWhosePreferenceStartsWith("rg-pair-" + lead + "-", List.of(lead));
                assertThat(put(c, lead, pair, "pair-" + lead, q(2, 2)).status()).isEqualTo(Answer.CREATED);
                expected.put(pair, "pair-" + lead);

                String over = c.keyWhosePreferenceStartsWith("rg-over-" + lead + "-", List.of(lead));
                assertThat(put(c, lead, over, "old", q(2, 2)).status()).isEqualTo(Answer.CREATED);
                assertThat(put(c, lead, over, "new-" + lead, q(1, 1)).status()).isEqualTo(Answer.CREATED);
                expected.put(over, "new-" + lead);

                String gone = c.keyWhosePreferenceStartsWith("rg-gone-" + lead + "-", List.of(lead));
                assertThat(put(c, lead, gone, "deleted", q(2, 2)).status()).isEqualTo(Answer.CREATED);
                assertThat(delete(c, lead, gone, q(1, 1)).status()).isEqualTo(Answer.ACCEPTED);
            }

            for (String via : c.ids()) {
                assertThat(range(c, via, "rg-", "rg.")).as("the range through " + via)
                        .isEqualTo(RangeAnswer.ok(entries(expected)));
                assertThat(range(c, via, "rg-over-", "rg-pair-")).as("a bounded range through " + via)
                        .isEqualTo(RangeAnswer.ok(entries(((TreeMap<String, String>) expected)
                                .subMap("rg-over-", "rg-pair-"))));
            }
        });
    }

    /** docs/http-api.md (ranges): with fewer than RF nodes down, every key (written to two replicas) is in the range. */
    @Test
    void withOneNodeDownARangeStillHasEveryKey() throws Exception {
        withCluster(3, c -> {
            Map<String, String> expected = new TreeMap<>();
            for (int i = 0; i < 30; i++) {
                String key = "rg-down-" + i;
                assertThat(put(c, upNode(c, i), key, "v" + i, q(2, 2)).status()).isEqualTo(Answer.CREATED);
                expected.put(key, "v" + i);
            }
            for (String down : c.ids()) {
                c.kill(down);
                for (String via : c.upNodes()) {
                    assertThat(range(c, via, "rg-down-", null)).as("through " + via + " with " + down + " down")
                            .isEqualTo(RangeAnswer.ok(entries(expected)));
                }
                c.restart(down);
            }
        });
    }

    /** docs/http-api.md (ranges): RF or more nodes down is 504 before the first chunk; one fewer is still 200. */
    @Test
    void withRfNodesDownARangeIsNotEnoughReplicasBeforeAnyChunk() throws Exception {
        withCluster(3, Map.of(NodeOption.REPLICATION_FACTOR, "2"), c -> {
            Map<String, String> expected = new TreeMap<>();
            for (int i = 0; i < 10; i++) {
                String key = "rg-rf-" + i; // the default from is RF = 2
                assertThat(put(c, upNode(c, i), key, "v" + i, KvorumClient.Options.DEFAULT).status()).isEqualTo(Answer.CREATED);
                expected.put(key, "v" + i);
            }
            c.kill("n3");
            assertThat(range(c, "n1", "rg-rf-", null)).as("one of RF = 2 down")
                    .isEqualTo(RangeAnswer.ok(entries(expected)));

            c.kill("n2");
            RangeAnswer refused = range(c, "n1", "rg-rf-", null);
            assertThat(refused.status()).as("two of RF = 2 down: " + refused).isEqualTo(504);
            assertThat(refused.error()).contains(NOT_ENOUGH_REPLICAS);
        });
    }

    /**
     * docs/http-api.md (TTL and ranges), across the cluster: a value written with a TTL is read through every node and
     * listed in ranges until it expires, and afterwards reads as absent everywhere and is left out
     * of every range (it is still stored until the purge removes it).
     */
    @Test
    void expiringValuesVanishFromReadsAndRangesThroughEveryNode() throws Exception {
        withCluster(3, c -> {
            KvorumClient.Options quorum = q(2, 3);
            assertThat(put(c.client("n1"), "rg-ttl-long", "lasts", quorum.withTtl(Duration.ofMillis(5000))).status())
                    .isEqualTo(Answer.CREATED);
            assertThat(put(c.client("n2"), "rg-ttl-short", "fleeting", quorum.withTtl(Duration.ofMillis(500))).status())
                    .isEqualTo(Answer.CREATED);
            assertThat(put(c.client("n3"), "rg-ttl-never", "stays", quorum).status()).isEqualTo(Answer.CREATED);

            for (String via : c.ids()) {
                assertThat(get(c, via, "rg-ttl-long", quorum)).as("through " + via)
                        .isEqualTo(new Answer(Answer.OK, "lasts"));
                assertThat(range(c, via, "rg-ttl-", null).entries()).as("range through " + via)
                        .contains("rg-ttl-long=lasts", "rg-ttl-never=stays");
            }

            awaitUntil(() -> c.ids().stream().allMatch(via ->
                            get(c, via, "rg-ttl-short", quorum).status() == Answer.NOT_FOUND),
                    "the value with ttl=500 reads as absent through every node");
            for (String via : c.ids()) {
                assertThat(range(c, via, "rg-ttl-", null).entries()).as("range through " + via)
                        .doesNotContain("rg-ttl-short=fleeting").contains("rg-ttl-never=stays");
            }
        });
    }

    /**
     * A slow client gets the whole large range, in order, while the nodes never read far ahead of
     * it; and a client that stops reading holds every node back instead of letting them buffer.
     */
    @Test
    void aLargeRangeStreamsToASlowReaderInBoundedMemory() throws Exception {
        withCluster(3, PATIENT, c -> {
            writeLargeRange(c);
            Duration fullRead = timeFullRead(c);

            // A client that takes a few KB and stops: every node stays open, none reads ahead far.
            long before = LocalEntryStream.entriesRead();
            try (RawHttp raw = openRange(c, "n1")) {
                assertThat(raw.readHead().status()).isEqualTo(200);
                assertThat(raw.readExactly(8 * 1024)).hasSize(8 * 1024);
                awaitUntil(() -> LocalEntryStream.openStreams() == 3 && servedScans() == 2,
                        "the paused range holds a stream on each node and a scan on each peer");
                Duration hold = clamp(fullRead.multipliedBy(2), Duration.ofSeconds(1), Duration.ofSeconds(30));
                long end = System.nanoTime() + hold.toNanos();
                while (System.nanoTime() < end) {
                    assertThat(LocalEntryStream.entriesRead() - before)
                            .as("entries read from storage for a client that stopped reading").isLessThan(READ_AHEAD_BOUND);
                    assertThat(LocalEntryStream.openStreams()).as("the range is still open, not read to its end")
                            .isEqualTo(3);
                    pause(Duration.ofMillis(20)); // sampling, while the condition must keep holding
                }
            }

            awaitReleased("the paused range, once its client left");
            before = LocalEntryStream.entriesRead();
            try (RawHttp raw = openRange(c, "n2")) {
                assertThat(raw.readHead().status()).isEqualTo(200);
                long maxAhead = 0;
                for (int n = 0; n < LARGE_ENTRIES; n++) {
                    int size = Integer.parseInt(raw.readLine().trim(), 16);
                    assertThat(size).as("entry %d of %d", n, LARGE_ENTRIES).isPositive();
                    byte[] chunk = raw.readExactly(size);
                    assertThat(raw.readLine()).isEmpty();
                    assertThat(chunk).as("entry %d", n).isEqualTo((largeKey(n) + "\n" + largeValue(n)).getBytes(UTF_8));
                    // Each key is stored on two nodes: a merge that reached entry n read about 2n entries.
                    maxAhead = Math.max(maxAhead, LocalEntryStream.entriesRead() - before - 2L * n);
                    if (n % 400 == 0) {
                        pause(Duration.ofMillis(20)); // 20 pauses of 20 ms: a slow reader
                    }
                }
                assertThat(raw.readLine().trim()).as("the terminating chunk").isEqualTo("0");
                assertThat(maxAhead).as("how far the nodes read ahead of the slow client").isLessThan(READ_AHEAD_BOUND);
            }
            awaitReleased("the finished range");
        });
    }

    /**
     * docs/http-api.md (ranges) "stops reading from the nodes when the client goes away", whenever it goes away; and
     * when a node goes away mid-range, the client sees a truncated stream and the others stop too.
     */
    @Test
    void aClientLeavingMidRangeEndsEveryNodesStreamAndScan() throws Exception {
        withCluster(3, PATIENT, c -> {
            writeLargeRange(c);
            for (String via : c.ids()) {
                try (RawHttp raw = openRange(c, via)) {
                    assertThat(raw.readHead().status()).isEqualTo(200);
                    raw.readExactly(8 * 1024);
                    awaitUntil(() -> LocalEntryStream.openStreams() == 3 && servedScans() == 2,
                            "the range through " + via + " holds a stream on each node and a scan on each peer");
                }
                awaitReleased("the range through " + via + ", once its client left");
            }

            // Gone right after the request, after the head only, after a little and after more.
            RawHttp.abandonAll(new int[] {-1, 0, 100, 64 * 1024, -1, 0, 100, 64 * 1024},
                    i -> openRange(c, upNode(c, i)));
            awaitReleased("every abandoned range");

            assertThat(range(c, "n3", largeKey(100), largeKey(110)).entries()).hasSize(10);
            awaitReleased("a range read to its end");

            // docs/http-api.md (ranges): a node failing after the first chunk truncates the answer, never shortens it.
            try (RangeReader reader = c.client("n1").range("rg-large-", null)) {
                for (int i = 0; i < 10; i++) {
                    assertThat(reader.next().keyString()).isEqualTo(largeKey(i));
                }
                c.kill("n2");
                assertThatThrownBy(() -> {
                    while (reader.next() != null) {
                        // read on until the stream breaks
                    }
                }).as("the range after n2 died mid-stream").isInstanceOf(RangeReader.TruncatedRangeException.class);
            }
            awaitReleased("a range cut short by a dead node");
        });
    }

    private static void writeLargeRange(MiniCluster c) {
        List<CompletableFuture<Void>> inFlight = new ArrayList<>();
        for (int i = 0; i < LARGE_ENTRIES; i++) {
            inFlight.add(c.client(c.ids().get(i % c.size())).put(largeKey(i), largeValue(i).getBytes(UTF_8), q(2, 2)));
            if (inFlight.size() == 128) {
                CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
                inFlight.clear();
            }
        }
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
    }

    /** Reads the large range through n3 as fast as possible; checks it is whole and says how long it took. */
    private static Duration timeFullRead(MiniCluster c) throws IOException {
        long started = System.nanoTime();
        RangeAnswer all = range(c, "n3", "rg-large-", null);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(all.status()).isEqualTo(Answer.OK);
        assertThat(all.entries()).hasSize(LARGE_ENTRIES);
        awaitReleased("the range read to its end");
        return took;
    }

    static String largeKey(int i) {
        return String.format("rg-large-%06d", i);
    }

    static String largeValue(int i) {
        char[] v = new char[VALUE_BYTES];
        Arrays.fill(v, (char) ('a' + i % 26));
        String id = Integer.toString(i);
        id.getChars(0, id.length(), v, 0);
        return new String(v);
    }

    /** A range request for the large range on a connection with a small receive buffer, so that backpressure comes early. */
    private static RawHttp openRange(MiniCluster c, String via) throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(16 * 1024);
        socket.connect(new InetSocketAddress(c.member(via).host(), c.member(via).httpPort()), 5000);
        socket.setSoTimeout((int) RawHttp.DEFAULT_READ_TIMEOUT.toMillis());
        RawHttp raw = RawHttp.wrap(socket);
        raw.write("GET /v0/entities?start=rg-large- HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        return raw;
    }

    private static void awaitReleased(String what) {
        awaitUntil(() -> LocalEntryStream.openStreams() == 0 && servedScans() == 0,
                what + " ended every node's stream and every scan");
    }

    private static List<String> entries(Map<String, String> expected) {
        return expected.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
    }

    private static Duration clamp(Duration d, Duration min, Duration max) {
        return d.compareTo(min) < 0 ? min : d.compareTo(max) > 0 ? max : d;
    }

    private static void awaitUntil(BooleanSupplier condition, String what) {
        TestNode.awaitUntil(WAIT_BOUND, condition, what);
    }

    /** Deliberate pacing of a slow test client; never a stand-in for waiting on a condition. */
    private static void pause(Duration d) {
        LockSupport.parkNanos(d.toNanos());
    }

    /** Range scans served to peers right now, over either transport (only one is in use at a time). */
    private static int servedScans() {
        return RangeService.activeScans() + SimulatedNetwork.activeScans();
    }
}
