package io.kvorum.perf.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ErrorLogTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final ErrorLog log = new ErrorLog(100, now::get);

    @Test
    void firstFailureOfEachKindIsLoggedWithItsReason() {
        assertThat(log.failed("read: HTTP 504", "Not Enough Replicas")).contains("read: HTTP 504", "Not Enough Replicas");
        assertThat(log.failed("update: HTTP 504", "Not Enough Replicas")).isNotNull();
    }

    @Test
    void repeatsWithinTheIntervalAreCountedAndReportedWithTheNextLine() {
        log.failed("read: HTTP 504", "first");
        // within the interval: suppressed
        now.addAndGet(50);
        assertThat(log.failed("read: HTTP 504", "second")).isNull();
        now.addAndGet(49);
        assertThat(log.failed("read: HTTP 504", "third")).isNull();
        // interval over: logged, with the two not logged
        now.addAndGet(1);
        assertThat(log.failed("read: HTTP 504", "fourth")).contains("fourth", "2 more");
        // and the count starts again
        now.addAndGet(100);
        assertThat(log.failed("read: HTTP 504", "fifth")).contains("fifth").doesNotContain("more");
    }
}
