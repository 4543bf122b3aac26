package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.config.NodeOption;
import io.kvorum.node.storage.ExpiryPurger;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.HybridLogicalClock;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md#starting-nodes "SIGTERM stops the node gracefully within 10 s" and "a restarted node serves everything
 * it acknowledged", for the hardest moment in-process: writes in flight and an expiry purge in the
 * middle of its scan. Storage must close only after the purger (and every other reader) has
 * stopped; {@link LevelDbStore} reports a read after close as an error log and a failing cursor,
 * which is what this test looks for.
 */
@Timeout(120)
class KvorumNodeShutdownTest {

    /** Enough expired records that one purge pass takes seconds: it is surely running at close. */
    private static final int EXPIRED_RECORDS = 200_000;
    private static final int WRITERS = 4;

    @TempDir
    Path dir;

    private final LogCapture logs = new LogCapture();

    @BeforeEach
    void captureLogs() {
        logs.attach();
    }

    @AfterEach
    void releaseLogs() {
        logs.detach();
    }

    @Test
    void closeUnderLoadAndDuringAPurgeIsCleanQuickAndLosesNoAcknowledgedWrite() throws Exception {
        writeExpiredRecords(dir.resolve("node").resolve("records"));
        TestNode node = TestNode.start(dir, Map.of(NodeOption.PURGE_INTERVAL, "50"));
        Queue<String> acknowledged = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        try {
            TestNode.awaitUntil(Duration.ofSeconds(20), KvorumNodeShutdownTest::purgeIsRunning,
                    "a purge pass is running");
            AtomicInteger next = new AtomicInteger();
            for (int w = 0; w < WRITERS; w++) {
                writers.add(CompletableFuture.runAsync(() -> {
                    while (!stop.get()) {
                        String key = "live-" + next.incrementAndGet();
                        try {
                            HttpResponse<byte[]> r = node.put("/v0/entity?id=" + key, value(key));
                            if (r.statusCode() == 201) {
                                acknowledged.add(key);
                            }
                        } catch (RuntimeException e) {
                            return; // the gateway closed: nothing after this was acknowledged
                        }
                    }
                }));
            }
            TestNode.awaitUntil(Duration.ofSeconds(20), () -> acknowledged.size() >= 200, "writes are acknowledged");
            assertThat(purgeIsRunning()).as("the purge is still running when close starts").isTrue();
        } finally {
            long started = System.nanoTime();
            node.close(); // also fails on a Netty leak report
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            stop.set(true);
            CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).join();
            assertThat(took).as("close() within the 10 s of docs/operations.md#signals-and-durability").isLessThan(Duration.ofSeconds(10));
        }
        assertThat(logs.problems()).as("warnings and errors logged while the node ran and closed").isEmpty();

        try (TestNode restarted = TestNode.start(dir)) {
            for (String key : acknowledged) {
                HttpResponse<byte[]> r = restarted.get("/v0/entity?id=" + key);
                assertThat(r.statusCode()).as("GET " + key + " after restart").isEqualTo(200);
                assertThat(r.body()).isEqualTo(value(key));
            }
        }
        assertThat(logs.problems()).isEmpty();
    }

    private static byte[] value(String key) {
        return ("value of " + key).getBytes(StandardCharsets.UTF_8);
    }

    /** Writes records that expired an hour ago straight into the node's storage, before it starts. */
    private static void writeExpiredRecords(Path recordsDir) throws Exception {
        long then = System.currentTimeMillis() - 3_600_000;
        try (StorageService storage = new StorageService(LevelDbStore.open(recordsDir, false, 8 << 20), 1, 4096)) {
            List<CompletableFuture<Boolean>> window = new ArrayList<>();
            for (int i = 0; i < EXPIRED_RECORDS; i++) {
                byte[] key = String.format("expired-%07d", i).getBytes(StandardCharsets.UTF_8);
                window.add(storage.write(key, Record.value(HybridLogicalClock.pack(then, 0), "n1",
                        new byte[32], then + 1)));
                if (window.size() == 2048) {
                    window.forEach(CompletableFuture::join);
                    window.clear();
                }
            }
            window.forEach(CompletableFuture::join);
        }
    }

    /** Whether some thread is inside {@link ExpiryPurger#runOnce()}. */
    private static boolean purgeIsRunning() {
        return Thread.getAllStackTraces().values().stream().anyMatch(stack -> {
            for (StackTraceElement frame : stack) {
                if (frame.getClassName().equals(ExpiryPurger.class.getName()) && frame.getMethodName().equals("runOnce")) {
                    return true;
                }
            }
            return false;
        });
    }
}
