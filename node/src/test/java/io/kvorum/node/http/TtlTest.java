package io.kvorum.node.http;

import static io.kvorum.node.http.HttpAssertions.assertError;
import static io.kvorum.node.http.HttpAssertions.assertStatus;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.RangeReader;
import io.kvorum.node.TestNode;
import io.kvorum.node.time.Clock;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/http-api.md {@code ttl}: a value expires MS milliseconds after the coordinator received the write,
 * and then reads as absent everywhere (404, and missing from ranges).
 *
 * <p>One test runs on the real clock, as a user sees it. The others drive the node's
 * {@link Clock} by hand, so that the instant of expiry is exact and no test depends on how fast
 * the machine is.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TtlTest {

    @TempDir
    static Path manualDir;
    static ManualClock clock;
    static TestNode manual;

    private String prefix;

    @BeforeAll
    static void startNodeOnAManualClock() throws Exception {
        clock = new ManualClock(1_700_000_000_000L);
        manual = TestNode.start(manualDir, Map.of(), clock);
    }

    @AfterAll
    static void stopNode() {
        if (manual != null) {
            manual.close();
        }
    }

    @BeforeEach
    void keyPrefix(TestInfo info) {
        prefix = info.getTestMethod().orElseThrow().getName() + "-";
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    @Test
    void onTheRealClockAValueWithTtl500IsReadableThenGone(@TempDir Path dir) throws Exception {
        try (TestNode node = TestNode.start(dir)) {
            String id = "/v0/entity?id=" + prefix + "k";
            long sentAt = System.currentTimeMillis();
            assertStatus(node.put(id + "&ttl=500", bytes("short-lived")), 201);

            HttpResponse<byte[]> first = node.get(id);
            long firstAnsweredAt = System.currentTimeMillis();
            // The node received the PUT after sentAt, so before sentAt + 500 it must still serve the
            // value. (If this machine was slower than that, the value may be gone: no claim then.)
            if (firstAnsweredAt < sentAt + 500) {
                assertStatus(first, 200);
                assertThat(first.body()).isEqualTo(bytes("short-lived"));
            }

            long[] goneAt = new long[1];
            TestNode.awaitUntil(Duration.ofSeconds(10), () -> {
                HttpResponse<byte[]> r = node.get(id);
                goneAt[0] = System.currentTimeMillis();
                return r.statusCode() == 404;
            }, "the value with ttl=500 reads as 404");
            assertThat(goneAt[0] - sentAt).as("ms from sending the PUT to seeing 404").isGreaterThanOrEqualTo(500);

            assertError(node.get(id), 404);
            assertThat(node.client().get(prefix + "k").join()).isEmpty();
            assertThat(keys(node, prefix)).isEmpty();
        }
    }

    @Test
    void valueExpiresExactlyTtlAfterTheWrite() throws IOException {
        String id = "/v0/entity?id=" + prefix + "k";
        assertStatus(manual.put(id + "&ttl=500", bytes("v")), 201);

        assertThat(manual.get(id).body()).isEqualTo(bytes("v"));
        assertThat(keys(manual, prefix)).containsExactly(prefix + "k");

        clock.advance(499);
        assertStatus(manual.get(id), 200);
        assertThat(keys(manual, prefix)).containsExactly(prefix + "k");

        clock.advance(1);
        assertError(manual.get(id), 404);
        assertThat(manual.client().get(prefix + "k").join()).isEmpty();
        assertThat(keys(manual, prefix)).isEmpty();

        clock.advance(60_000);
        assertError(manual.get(id), 404);
    }

    @Test
    void ttlWriteOverwrittenByAPlainWriteStays() throws IOException {
        String id = "/v0/entity?id=" + prefix + "k";
        assertStatus(manual.put(id + "&ttl=500", bytes("temporary")), 201);
        assertStatus(manual.put(id, bytes("permanent")), 201);

        clock.advance(10_000);
        HttpResponse<byte[]> get = manual.get(id);
        assertStatus(get, 200);
        assertThat(get.body()).isEqualTo(bytes("permanent"));
        assertThat(keys(manual, prefix)).containsExactly(prefix + "k");
    }

    @Test
    void plainWriteOverwrittenByATtlWriteExpiresAndTheOldValueDoesNotComeBack() throws IOException {
        String id = "/v0/entity?id=" + prefix + "k";
        assertStatus(manual.put(id, bytes("old")), 201);
        assertStatus(manual.put(id + "&ttl=500", bytes("new")), 201);
        assertThat(manual.get(id).body()).isEqualTo(bytes("new"));

        clock.advance(500);
        assertError(manual.get(id), 404);
        assertThat(keys(manual, prefix)).isEmpty();
    }

    @Test
    void expiredKeyCanBeWrittenAgain() {
        String id = "/v0/entity?id=" + prefix + "k";
        assertStatus(manual.put(id + "&ttl=100", bytes("first")), 201);
        clock.advance(100);
        assertError(manual.get(id), 404);

        assertStatus(manual.put(id, bytes("second")), 201);
        assertThat(manual.get(id).body()).isEqualTo(bytes("second"));
    }

    @Test
    void newTtlWriteRestartsTheCountdown() {
        String id = "/v0/entity?id=" + prefix + "k";
        assertStatus(manual.put(id + "&ttl=500", bytes("a")), 201);
        clock.advance(400);
        assertStatus(manual.put(id + "&ttl=500", bytes("b")), 201);
        clock.advance(400); // 800 after the first write, 400 after the second
        assertThat(manual.get(id).body()).isEqualTo(bytes("b"));
        clock.advance(100);
        assertError(manual.get(id), 404);
    }

    @Test
    void deletingAValueWithTtlRemovesItAtOnce() throws IOException {
        String id = "/v0/entity?id=" + prefix + "k";
        assertStatus(manual.put(id + "&ttl=60000", bytes("v")), 201);
        assertStatus(manual.delete(id), 202);
        assertError(manual.get(id), 404);
        assertThat(keys(manual, prefix)).isEmpty();
    }

    @Test
    void rangeSkipsRunsOfExpiredEntriesLongerThanABatch() throws IOException {
        // More expired entries in a row than one internal range batch holds, between live ones: a
        // batch that is all expired must not end the stream early.
        List<String> live = new ArrayList<>();
        live.add(prefix + "0000-live");
        manual.client().put(prefix + "0000-live", bytes("x")).join();
        for (int i = 1; i <= 700; i++) {
            String key = String.format("%s%04d-expiring", prefix, i);
            assertStatus(manual.put("/v0/entity?id=" + key + "&ttl=1000", bytes("y")), 201);
        }
        for (int i = 701; i <= 705; i++) {
            String key = String.format("%s%04d-live", prefix, i);
            live.add(key);
            manual.client().put(key, bytes("z")).join();
        }
        assertThat(keys(manual, prefix)).hasSize(706);

        clock.advance(1000);
        assertThat(keys(manual, prefix)).containsExactlyElementsOf(live);
    }

    /** The keys of a range over every key that starts with {@code prefix}. */
    static List<String> keys(TestNode node, String prefix) throws IOException {
        List<String> keys = new ArrayList<>();
        try (RangeReader reader = node.client().range(prefix, prefix + "\uffff")) {
            for (RangeReader.Entry e : reader) {
                keys.add(e.keyString());
            }
        }
        return keys;
    }

    /** A wall clock that moves only when told; nanoTime follows it, from an arbitrary origin. */
    static final class ManualClock implements Clock {
        private final AtomicLong millis;

        ManualClock(long startMillis) {
            this.millis = new AtomicLong(startMillis);
        }

        void advance(long deltaMillis) {
            millis.addAndGet(deltaMillis);
        }

        @Override
        public long currentTimeMillis() {
            return millis.get();
        }

        @Override
        public long nanoTime() {
            return TimeUnit.MILLISECONDS.toNanos(millis.get());
        }
    }
}
