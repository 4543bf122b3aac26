package io.kvorum.node.http;

import static io.kvorum.node.http.HttpAssertions.assertError;
import static io.kvorum.node.http.HttpAssertions.assertStatus;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumException;
import io.kvorum.node.RawHttp;
import io.kvorum.node.TestNode;
import io.kvorum.node.config.NodeOption;
import io.kvorum.testkit.PrometheusText;
import io.kvorum.node.time.Clock;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/http-api.md: "node overloaded (its bounded queues are full) → 503 with Retry-After; the request had
 * no effect". The node runs with {@code --storage-queue 1 --storage-readers 1}.
 *
 * <p>To fill the read queue deterministically, the one storage reader thread is held: the node's
 * {@link Clock} is a {@link ReaderGate} that blocks the first time a {@code storage-reader}
 * thread asks it for the time, which a range does when it filters expired entries out of a batch.
 * With the reader held and one read waiting in the queue of capacity 1, every further read must
 * be refused with 503 at once, and the waiting one must succeed once the reader is let go.
 *
 * <p>The same held reader, on a node with a short {@code --request-timeout}, makes a read miss its
 * deadline: the docs/http-api.md row "fewer than ack replicas answered within --request-timeout → 504, the body
 * contains Not Enough Replicas", on a single node.
 *
 * <p>Writes go through a separate queue drained by a single writer thread, and nothing the test
 * controls runs on that thread, so a full write queue cannot be produced deterministically. The
 * write test therefore fires a burst and checks, for whatever share of it was refused, that each
 * refusal is a proper 503 and had no effect, and that each acceptance took effect; it does not
 * require any refusal to happen.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OverloadTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dataDir;
    ReaderGate gate;
    TestNode node;

    @BeforeEach
    void startNode() throws Exception {
        // The read left waiting in the queue must not time out while the reader is held.
        startNode("60000");
    }

    private void startNode(String requestTimeoutMillis) throws Exception {
        if (node != null) {
            gate.release();
            node.close();
        }
        gate = new ReaderGate();
        node = TestNode.start(dataDir, Map.of(
                NodeOption.STORAGE_QUEUE, "1",
                NodeOption.STORAGE_READERS, "1",
                NodeOption.REQUEST_TIMEOUT, requestTimeoutMillis), gate);
    }

    @AfterEach
    void stopNode() {
        gate.release();
        if (node != null) {
            node.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    /** Keys for the range that will hold the reader: a few batches' worth. */
    private void writeRangeData() {
        for (int i = 0; i < 600; i++) {
            assertStatus(node.put("/v0/entity?id=" + String.format("r%04d", i), bytes("v" + i)), 201);
        }
    }

    /**
     * Starts a range and waits until its batch holds the only reader thread in the gate. Returns the
     * range's pending answer. Should a range complete without its filter running on the reader
     * thread (it may run on the event loop when a batch completes very fast), another one is tried.
     */
    private CompletableFuture<RawHttp.Response> holdTheReader(List<RawHttp> toClose) throws IOException {
        gate.arm();
        for (int attempt = 0; attempt < 20; attempt++) {
            RawHttp raw = RawHttp.connect(node.address(), Duration.ofSeconds(90));
            toClose.add(raw);
            raw.write("GET /v0/entities?start=r HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            CompletableFuture<RawHttp.Response> answer = CompletableFuture.supplyAsync(() -> {
                try {
                    return raw.readResponse();
                } catch (IOException e) {
                    throw new CompletionException(e);
                }
            });
            TestNode.awaitUntil(WAIT, () -> gate.entered() || answer.isDone(),
                    "a range holds the storage reader, or completes");
            if (gate.entered()) {
                return answer;
            }
        }
        throw new AssertionError("no range batch ever consulted the clock on the storage reader thread");
    }

    @Test
    void readsBeyondAFullQueueAre503WithRetryAfterAndTheQueuedOneSucceeds() throws Exception {
        for (int i = 0; i < 8; i++) {
            assertStatus(node.put("/v0/entity?id=k" + i, bytes("value" + i)), 201);
        }
        writeRangeData();
        List<RawHttp> sockets = new ArrayList<>();
        try {
            CompletableFuture<RawHttp.Response> range = holdTheReader(sockets);

            // The reader is held and the queue holds one read: of 8 GETs at once, exactly one can
            // wait in the queue; the other 7 must be refused at once.
            List<CompletableFuture<HttpResponse<byte[]>>> gets = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                gets.add(node.sendAsync("GET", "/v0/entity?id=k" + i, null));
            }
            TestNode.awaitUntil(WAIT, () -> gets.stream().filter(CompletableFuture::isDone).count() == 7,
                    "7 of the 8 reads are answered");
            int queuedIndex = -1;
            for (int i = 0; i < 8; i++) {
                if (!gets.get(i).isDone()) {
                    queuedIndex = i;
                    continue;
                }
                HttpResponse<byte[]> r = gets.get(i).join();
                assertError(r, 503);
                assertThat(r.headers().firstValue("retry-after")).as("Retry-After of a 503")
                        .hasValueSatisfying(v -> assertThat(Long.parseLong(v.strip())).isPositive());
            }
            CompletableFuture<HttpResponse<byte[]>> queued = gets.get(queuedIndex);
            // The Java client reports the same refusal as an overload.
            assertThat(node.client().get("k1").handle((v, e) -> e).join())
                    .isInstanceOfSatisfying(CompletionException.class, e -> assertThat(e.getCause())
                            .isInstanceOfSatisfying(KvorumException.class, k -> assertThat(k.isOverloaded()).isTrue()));
            assertThat(queued).as("the queued read waits for the reader").isNotDone();
            // docs/operations.md#metrics: each refusal counts, in storage and as the GET's 503 (once its answer is written).
            TestNode.awaitUntil(WAIT, () -> {
                PrometheusText metrics = PrometheusText.parse(new String(node.get("/metrics").body(), UTF_8));
                return metrics.sum("kvorum_storage_rejected_total", Map.of()) == 8
                        && metrics.sum("kvorum_requests_total", Map.of("op", "get", "code", "503")) == 8;
            }, "the 8 refused reads are counted");

            gate.release();
            HttpResponse<byte[]> first = queued.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertStatus(first, 200);
            assertThat(first.body()).isEqualTo(bytes("value" + queuedIndex));
            RawHttp.Response rangeAnswer = range.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(rangeAnswer.status()).isEqualTo(200);
            assertThat(rangeAnswer.chunks()).as("the held range completes").hasSize(600);
        } finally {
            gate.release();
            for (RawHttp raw : sockets) {
                raw.close();
            }
        }
        // Recovered: every key reads normally again.
        for (int i = 0; i < 8; i++) {
            assertThat(node.get("/v0/entity?id=k" + i).body()).isEqualTo(bytes("value" + i));
        }
        node.assertServesNewConnections();
    }

    @Test
    void rangeBeyondAFullQueueIs503BeforeAnyChunk() throws Exception {
        assertStatus(node.put("/v0/entity?id=k0", bytes("value0")), 201);
        writeRangeData();
        List<RawHttp> sockets = new ArrayList<>();
        try {
            CompletableFuture<RawHttp.Response> held = holdTheReader(sockets);
            // Of two reads, one waits in the queue and one is refused: then the queue is full.
            CompletableFuture<HttpResponse<byte[]>> x = node.sendAsync("GET", "/v0/entity?id=k0", null);
            CompletableFuture<HttpResponse<byte[]>> y = node.sendAsync("GET", "/v0/entity?id=k0", null);
            TestNode.awaitUntil(WAIT, () -> x.isDone() || y.isDone(), "one of two reads is answered");
            CompletableFuture<HttpResponse<byte[]>> queued = x.isDone() ? y : x;
            assertError((x.isDone() ? x : y).join(), 503);

            HttpResponse<byte[]> range = node.get("/v0/entities?start=r");
            assertError(range, 503);
            assertThat(range.headers().firstValue("retry-after")).isPresent();
            assertThat(range.headers().firstValue("transfer-encoding")).as("refused before streaming").isEmpty();

            gate.release();
            assertStatus(queued.get(WAIT.toSeconds(), TimeUnit.SECONDS), 200);
            assertThat(held.get(WAIT.toSeconds(), TimeUnit.SECONDS).chunks()).hasSize(600);
        } finally {
            gate.release();
            for (RawHttp raw : sockets) {
                raw.close();
            }
        }
        assertThat(node.get("/v0/entities?start=r").statusCode()).isEqualTo(200);
    }

    @Test
    void readStuckPastTheRequestTimeoutIs504NotEnoughReplicas() throws Exception {
        assertStatus(node.put("/v0/entity?id=k0", bytes("value0")), 201);
        writeRangeData();
        startNode("300"); // the same data, now with a short deadline
        List<RawHttp> sockets = new ArrayList<>();
        try {
            CompletableFuture<RawHttp.Response> held = holdTheReader(sockets);
            // Its one replica (this node's storage) cannot answer while the reader is held: after
            // --request-timeout the coordinator gives up.
            HttpResponse<byte[]> stuck = node.get("/v0/entity?id=k0");
            assertError(stuck, 504);
            assertThat(new String(stuck.body(), UTF_8)).contains("Not Enough Replicas");

            gate.release();
            assertThat(held.get(WAIT.toSeconds(), TimeUnit.SECONDS).status()).isEqualTo(200);
        } finally {
            gate.release();
            for (RawHttp raw : sockets) {
                raw.close();
            }
        }
        TestNode.awaitUntil(WAIT, () -> {
            HttpResponse<byte[]> r = node.get("/v0/entity?id=k0");
            return r.statusCode() == 200 && Arrays.equals(r.body(), bytes("value0"));
        }, "reads succeed again once the reader is free");
    }

    @Test
    void writesUnderABurstEitherTakeEffectOrAre503WithoutEffect() throws IOException {
        int n = 150;
        byte[] big = new byte[256 * 1024];
        Arrays.fill(big, (byte) 'x');
        // Keys to delete, written one at a time first (one request at a time never overflows).
        for (int i = 0; i < n; i++) {
            assertStatus(node.put("/v0/entity?id=del" + i, bytes("keep" + i)), 201);
        }
        List<CompletableFuture<HttpResponse<byte[]>>> puts = new ArrayList<>();
        List<CompletableFuture<HttpResponse<byte[]>>> deletes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            puts.add(node.sendAsync("PUT", "/v0/entity?id=put" + i, big));
            deletes.add(node.sendAsync("DELETE", "/v0/entity?id=del" + i, null));
        }
        for (int i = 0; i < n; i++) {
            HttpResponse<byte[]> put = puts.get(i).join();
            HttpResponse<byte[]> get = node.get("/v0/entity?id=put" + i);
            if (put.statusCode() == 503) {
                assertError(put, 503);
                assertThat(put.headers().firstValue("retry-after")).isPresent();
                assertError(get, 404); // each key was written once: a refused PUT left nothing
            } else {
                assertStatus(put, 201);
                assertStatus(get, 200);
                assertThat(Arrays.equals(get.body(), big)).as("value of put%d", i).isTrue();
            }

            HttpResponse<byte[]> delete = deletes.get(i).join();
            HttpResponse<byte[]> afterDelete = node.get("/v0/entity?id=del" + i);
            if (delete.statusCode() == 503) {
                assertError(delete, 503);
                assertThat(delete.headers().firstValue("retry-after")).isPresent();
                assertStatus(afterDelete, 200); // a refused DELETE left the value in place
                assertThat(afterDelete.body()).isEqualTo(bytes("keep" + i));
            } else {
                assertStatus(delete, 202);
                assertError(afterDelete, 404);
            }
        }
        node.assertServesNewConnections();
    }

    /**
     * The system clock, except that once {@link #arm() armed} it holds the first
     * {@code storage-reader} thread that asks for the time until {@link #release()}.
     */
    static final class ReaderGate implements Clock {
        private final AtomicBoolean armed = new AtomicBoolean();
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        void arm() {
            armed.set(true);
        }

        boolean entered() {
            return entered.getCount() == 0;
        }

        void release() {
            released.countDown();
        }

        @Override
        public long currentTimeMillis() {
            if (Thread.currentThread().getName().startsWith("storage-reader") && armed.compareAndSet(true, false)) {
                entered.countDown();
                try {
                    // Bounded, so that a failing test cannot hold a node thread forever.
                    released.await(90, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return System.currentTimeMillis();
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }
    }
}
