package io.kvorum.node.storage;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A store that keeps failing (as LevelDB does for every write once a compaction met a corrupt
 * table) is counted in full but logged once at first and then once a minute at most, on a clock
 * of the test's own.
 */
class StorageFailuresTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Counter reads = registry.counter("reads");
    private final Counter writes = registry.counter("writes");
    private long nanos = 1_000;
    private final StorageFailures failures = new StorageFailures("storage", reads, writes, () -> nanos, () -> nanos / 1_000_000);
    private final Capture log = new Capture();

    @AfterEach
    void detach() {
        log.stop();
    }

    private static RuntimeException corruption() {
        return new StorageException("write failed", new IOException("Corruption: block checksum mismatch: /data/records/000040.sst"));
    }

    @Test
    void aStoreThatKeepsFailingIsCountedInFullAndLoggedOnceAMinute() {
        assertThat(failures.summary()).as("nothing failed yet").isNull();

        for (int i = 0; i < 10_000; i++) {
            failures.failed(StorageFailures.Op.WRITE, 2, new CompletionException(corruption()));
            nanos += TimeUnit.MILLISECONDS.toNanos(1);
        }
        assertThat(writes.count()).isEqualTo(20_000);
        assertThat(log.lines).as("the first at once, then one per full minute of the ten seconds: none").hasSize(1);
        assertThat(log.lines.get(0))
                .startsWith("storage write failed: write failed: Corruption: block checksum mismatch: /data/records/000040.sst.")
                .contains("kvorum_storage_errors_total", "A corrupt data file");

        nanos += TimeUnit.SECONDS.toNanos(StorageFailures.SUMMARY_SECONDS);
        RuntimeException cause = corruption();
        RuntimeException reported = failures.failed(StorageFailures.Op.WRITE, 1, cause);
        assertThat(reported).as("what the write is failed with, which nobody logs again")
                .isInstanceOf(StorageFailures.Reported.class).hasCause(cause)
                .hasMessage("storage write failed: write failed: Corruption: block checksum mismatch: "
                        + "/data/records/000040.sst");
        assertThat(log.lines).hasSize(2);
        assertThat(log.lines.get(1)).as("all but the first report's 2")
                .startsWith("19999 more storage writes failed in the last 70 s; the last: write failed");

        failures.failed(StorageFailures.Op.READ, 1, corruption());
        assertThat(log.lines).as("reads have a first line of their own").hasSize(3);
        assertThat(log.lines.get(2)).startsWith("storage read failed");

        StorageFailures.Summary summary = failures.summary();
        assertThat(summary.reads()).isEqualTo(1);
        assertThat(summary.writes()).isEqualTo(20_001);
        assertThat(summary.last()).isEqualTo("read: write failed: Corruption: block checksum mismatch: /data/records/000040.sst");
        assertThat(summary.lastAt()).isEqualTo(nanos / 1_000_000);
    }

    @Test
    void aStoreClosedUnderItsCallerIsNoStorageFault() {
        RuntimeException closed = new StorageException("a read after close: the store is closed", null);

        assertThat(failures.failed(StorageFailures.Op.READ, 1, closed)).as("returned as it is").isSameAs(closed);
        assertThat(reads.count()).isZero();
        assertThat(failures.summary()).isNull();
        assertThat(log.lines).isEmpty();
    }

    /** The ERROR lines of {@link StorageFailures}, formatted. */
    private static final class Capture extends AppenderBase<ILoggingEvent> {
        final List<String> lines = new CopyOnWriteArrayList<>();
        private final Logger logger = (Logger) LoggerFactory.getLogger(StorageFailures.class);

        Capture() {
            setContext(logger.getLoggerContext());
            start();
            logger.addAppender(this);
        }

        @Override
        protected void append(ILoggingEvent event) {
            lines.add(event.getFormattedMessage());
        }

        @Override
        public void stop() {
            logger.detachAppender(this);
            super.stop();
        }
    }
}
