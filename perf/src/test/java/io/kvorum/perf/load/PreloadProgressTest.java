package io.kvorum.perf.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PreloadProgressTest {

    @Test
    void parsesRunningAndDoneLinesWithTheirNon2xxAnswers() {
        assertThat(PreloadProgress.parse("kvorum-preload 1 50000 3000 running")).hasValueSatisfying(r -> {
            assertThat(r.thread()).isEqualTo(1);
            assertThat(r.share()).isEqualTo(50_000);
            assertThat(r.written()).isEqualTo(3000);
            assertThat(r.done()).isFalse();
            assertThat(r.failed()).isEmpty();
        });
        assertThat(PreloadProgress.parse("kvorum-preload 0 50000 49988 done 503=10 500=2")).hasValueSatisfying(r -> {
            assertThat(r.done()).isTrue();
            assertThat(r.failed()).containsExactly(Map.entry(500, 2L), Map.entry(503, 10L));
            assertThat(r.answered()).isEqualTo(50_000);
        });
    }

    @Test
    void otherLinesAreNoReports() {
        assertThat(PreloadProgress.parse("Running 1m test @ http://127.0.0.1:8080")).isEmpty();
        assertThat(PreloadProgress.parse("kvorum-status 201=100000")).isEmpty();
        assertThat(PreloadProgress.parse("kvorum-preload 0 50000 1000 maybe")).isEmpty();
        assertThat(PreloadProgress.parse("kvorum-preload 0 50000")).isEmpty();
    }

    @Test
    void completeOnlyWhenEveryThreadReportedDone() {
        PreloadProgress progress = new PreloadProgress(2, 100);
        assertThat(progress.allDone()).isFalse();

        progress.accept(PreloadProgress.parse("kvorum-preload 1 50 50 done").orElseThrow());
        // thread 0 has not reported at all
        assertThat(progress.allDone()).isFalse();
        assertThat(progress.threadsNotDone()).isEqualTo(1);

        progress.accept(PreloadProgress.parse("kvorum-preload 0 50 40 running").orElseThrow());
        assertThat(progress.allDone()).isFalse();
        assertThat(progress.answered()).isEqualTo(90);

        progress.accept(PreloadProgress.parse("kvorum-preload 0 50 47 done 503=3").orElseThrow());
        assertThat(progress.allDone()).isTrue();
        assertThat(progress.shares()).isEqualTo(100);
        assertThat(progress.written()).isEqualTo(97);
        assertThat(progress.failed()).containsExactly(Map.entry(503, 3L));
        assertThat(progress.failedText()).isEqualTo("503: 3");
    }

    @Test
    void aThreadTheToolDoesNotRunIsRefused() {
        PreloadProgress progress = new PreloadProgress(2, 100);
        assertThatThrownBy(() -> progress.accept(PreloadProgress.parse("kvorum-preload 2 33 33 done").orElseThrow()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("thread 2");
    }

    /** The tool keeps running after the last done line: follow must return without reading on. */
    @Test
    void followReturnsAtTheLastDoneLineWithoutReadingFurther() throws Exception {
        String output = """
                Running 1m test @ http://127.0.0.1:8080
                  2 threads and 64 connections
                kvorum-preload 0 2000 1000 running
                kvorum-preload 1 2000 1000 running
                kvorum-preload 1 2000 2000 done
                kvorum-preload 0 2000 2000 done
                """;
        InputStream neverEnds = new InputStream() {
            @Override
            public int read() {
                throw new AssertionError("read past the last done line: the tool would still be running here");
            }
        };
        BufferedReader in = new BufferedReader(new InputStreamReader(new SequenceInputStream(
                new ByteArrayInputStream(output.getBytes(StandardCharsets.UTF_8)), neverEnds), StandardCharsets.UTF_8), 1);
        PreloadProgress progress = new PreloadProgress(2, 4000);
        List<String> other = new ArrayList<>();
        AtomicInteger reports = new AtomicInteger();

        boolean complete = progress.follow(in, other::add, reports::incrementAndGet);

        assertThat(complete).isTrue();
        assertThat(reports).hasValue(4);
        assertThat(progress.written()).isEqualTo(4000);
        assertThat(other).containsExactly("Running 1m test @ http://127.0.0.1:8080", "  2 threads and 64 connections",
                "kvorum-preload 1 2000 2000 done", "kvorum-preload 0 2000 2000 done");
    }

    @Test
    void followReturnsFalseWhenTheOutputEndsBeforeEveryThreadIsDone() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(new ByteArrayInputStream(
                "kvorum-preload 0 10 10 done\nunable to connect to 127.0.0.1:1 Connection refused\n".getBytes(StandardCharsets.UTF_8)),
                StandardCharsets.UTF_8));
        PreloadProgress progress = new PreloadProgress(2, 20);

        assertThat(progress.follow(in, line -> { }, () -> { })).isFalse();
        assertThat(progress.threadsNotDone()).isEqualTo(1);
    }

    @Test
    void barShowsPercentRateAndEta() {
        PreloadProgress progress = new PreloadProgress(1, 200_000);
        progress.accept(PreloadProgress.parse("kvorum-preload 0 200000 50000 running").orElseThrow());

        assertThat(progress.bar(2.0)).isEqualTo("preload  25.0%  50,000/200,000 keys  25,000 keys/s  ETA 6 s");
    }
}
