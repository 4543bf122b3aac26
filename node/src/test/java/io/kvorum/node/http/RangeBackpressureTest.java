package io.kvorum.node.http;

import io.kvorum.node.model.Entry;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.RangeReader;
import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import io.kvorum.node.storage.LocalEntryStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/http-api.md (ranges): a range streams in bounded memory and "stops reading from the nodes when the client
 * goes away". A client that reads a few KB of a 20 MiB range holds the node's range stream open
 * (the node waits instead of buffering the rest) but no LevelDB iterator, and closing the socket
 * ends the stream. A slow reader still gets every entry.
 *
 * <p>{@link LocalEntryStream#openStreams()} counts the range streams open in this JVM, and
 * {@link LocalEntryStream#openCursors()} the LevelDB iterators they hold.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RangeBackpressureTest {

    private static final int ENTRIES = 20_000;
    private static final int VALUE_BYTES = 1024;
    private static final Duration RELEASE_TIMEOUT = Duration.ofSeconds(15);

    @TempDir
    static Path dataDir;
    static TestNode node;
    /** How long one client reading as fast as it can takes to get the whole range, on this machine. */
    static Duration fullReadTime;

    @BeforeAll
    static void writeTwentyMebibytes() throws Exception {
        node = TestNode.start(dataDir);
        List<CompletableFuture<Void>> inFlight = new ArrayList<>();
        for (int i = 0; i < ENTRIES; i++) {
            inFlight.add(node.client().put(key(i), value(i)));
            if (inFlight.size() == 128) {
                CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
                inFlight.clear();
            }
        }
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();

        long started = System.nanoTime();
        int n = 0;
        try (RangeReader reader = node.client().range("bp", null)) {
            for (RangeReader.Entry ignored : reader) {
                n++;
            }
        }
        fullReadTime = Duration.ofNanos(System.nanoTime() - started);
        assertThat(n).isEqualTo(ENTRIES);
    }

    @AfterAll
    static void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    @BeforeEach
    void noRangeLeftFromEarlierTests() {
        TestNode.awaitUntil(RELEASE_TIMEOUT, () -> LocalEntryStream.openStreams() == 0, "no range stream is open");
    }

    static String key(int i) {
        return String.format("bp%06d", i);
    }

    static byte[] value(int i) {
        byte[] v = new byte[VALUE_BYTES];
        Arrays.fill(v, (byte) ('a' + i % 26));
        byte[] id = Integer.toString(i).getBytes(UTF_8);
        System.arraycopy(id, 0, v, 0, id.length);
        return v;
    }

    /** A connection with a small receive buffer, so that the node runs into backpressure early. */
    private static RawHttp openRange() throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(16 * 1024);
        socket.connect(new InetSocketAddress("127.0.0.1", node.address().getPort()), 5000);
        socket.setSoTimeout(20_000);
        RawHttp raw = RawHttp.wrap(socket);
        raw.write("GET /v0/entities?start=bp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        return raw;
    }

    /**
     * Asserts that {@code condition} holds for the whole of {@code period}. Used once, to show that
     * a paused range stays paused: were the node to read ahead regardless of the client, it would
     * read the range to its end, and end its stream, within about {@link #fullReadTime}.
     */
    private static void assertHoldsFor(Duration period, java.util.function.BooleanSupplier condition, String what) {
        long end = System.nanoTime() + period.toNanos();
        while (System.nanoTime() < end) {
            assertThat(condition.getAsBoolean()).as(what).isTrue();
            pause(Duration.ofMillis(20));
        }
    }

    /** Deliberate pacing of a test client; never a stand-in for waiting on a condition. */
    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void clientThatStopsReadingHoldsTheRangeButNoIteratorAndClosingEndsIt() throws IOException {
        RawHttp raw = openRange();
        try {
            RawHttp.Head head = raw.readHead();
            assertThat(head.status()).isEqualTo(200);
            assertThat(raw.readExactly(8 * 1024)).hasSize(8 * 1024); // a few KB of 20 MiB

            TestNode.awaitUntil(RELEASE_TIMEOUT,
                    () -> LocalEntryStream.openStreams() == 1 && LocalEntryStream.openCursors() == 0,
                    "the range's stream is open, and waits between two batches");
            Duration hold = fullReadTime.multipliedBy(2);
            hold = hold.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : hold;
            hold = hold.compareTo(Duration.ofSeconds(30)) > 0 ? Duration.ofSeconds(30) : hold;
            assertHoldsFor(hold, () -> LocalEntryStream.openStreams() == 1,
                    "the node waits for the client instead of reading the range to its end");
            assertThat(LocalEntryStream.openCursors())
                    .as("LevelDB iterators held for a client that stopped reading").isZero();

            // Meanwhile the node serves other clients.
            assertThat(node.client().get(key(7)).join()).hasValue(value(7));
            node.assertServesNewConnections();
        } finally {
            raw.close();
        }
        TestNode.awaitUntil(RELEASE_TIMEOUT, () -> LocalEntryStream.openStreams() == 0,
                "the stream ends after the client closed the connection");

        assertThat(node.client().get(key(ENTRIES - 1)).join()).hasValue(value(ENTRIES - 1));
        node.assertServesNewConnections();
        try (RangeReader reader = node.client().range(key(100), key(200))) {
            int n = 0;
            for (RangeReader.Entry e : reader) {
                assertThat(e.keyString()).isEqualTo(key(100 + n++));
            }
            assertThat(n).isEqualTo(100);
        }
    }

    /** {@code kvorum_requests_total{code="200",op="range"}}, as the node's {@code /metrics} says it. */
    private static double rangesAnswered200() {
        String scrape = node.http().sendAsync(HttpRequest.newBuilder(node.uri("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).join().body();
        Matcher m = Pattern.compile("kvorum_requests_total\\{code=\"200\",op=\"range\"\\} (\\S+)").matcher(scrape);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    @Test
    void aRangeWhoseClientLeftMidwayIsCountedWithItsStatus() throws IOException {
        double before = rangesAnswered200();
        RawHttp raw = openRange();
        try {
            assertThat(raw.readHead().status()).isEqualTo(200);
            assertThat(raw.readExactly(8 * 1024)).hasSize(8 * 1024);
        } finally {
            raw.close();
        }
        TestNode.awaitUntil(RELEASE_TIMEOUT, () -> rangesAnswered200() == before + 1,
                "the range counted, as answered 200, once its client left");
    }

    @Test
    void clientsThatLeaveAtAnyPointEndTheirStreams() throws IOException {
        // Gone right after sending the request, after the head only, and after a little of the body.
        RawHttp.abandonAll(new int[] {-1, 0, 100, 64 * 1024, -1, 0, 100, 64 * 1024}, i -> openRange());
        TestNode.awaitUntil(RELEASE_TIMEOUT, () -> LocalEntryStream.openStreams() == 0,
                "every abandoned range ended its stream");
        node.assertServesNewConnections();
    }

    @Test
    void slowReaderGetsTheWholeRangeInOrder() throws IOException {
        try (RawHttp raw = openRange()) {
            RawHttp.Head head = raw.readHead();
            assertThat(head.status()).isEqualTo(200);
            assertThat(head.header("transfer-encoding")).isEqualToIgnoringCase("chunked");
            int n = 0;
            while (true) {
                int size = Integer.parseInt(raw.readLine().trim(), 16);
                if (size == 0) {
                    assertThat(raw.readLine()).as("end of the chunked body").isEmpty();
                    break;
                }
                byte[] chunk = raw.readExactly(size);
                assertThat(raw.readLine()).isEmpty();
                byte[] expected = (key(n) + "\n" + new String(value(n), UTF_8)).getBytes(UTF_8);
                assertThat(chunk).as("entry %d", n).isEqualTo(expected);
                n++;
                if (n % 400 == 0) {
                    pause(Duration.ofMillis(20)); // 50 pauses of 20 ms: 1 s in all
                }
                if (n == ENTRIES / 2) {
                    // Half-way, with the node waiting on this reader, others are still served.
                    assertThat(node.client().get(key(3)).join()).hasValue(value(3));
                }
            }
            assertThat(n).isEqualTo(ENTRIES);
        }
        TestNode.awaitUntil(RELEASE_TIMEOUT, () -> LocalEntryStream.openStreams() == 0, "the finished range ended its stream");
    }

    @Test
    void javaClientRangeCanBeClosedEarly() throws IOException {
        try (RangeReader reader = node.client().range("bp", null)) {
            for (int i = 0; i < 10; i++) {
                assertThat(reader.next().keyString()).isEqualTo(key(i));
            }
        }
        TestNode.awaitUntil(RELEASE_TIMEOUT, () -> LocalEntryStream.openStreams() == 0,
                "closing the RangeReader ended the node's stream");
        node.assertServesNewConnections();
    }
}
