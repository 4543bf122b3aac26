package io.kvorum.perf.profile;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.perf.report.FrameDiff;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AsyncProfiler#convert} on a JFR file the JDK's own Flight Recorder wrote in this JVM
 * (jfr-converter reads it as it reads async-profiler's): every event gets its flame graph and its
 * gzipped collapsed stacks, so a run folder can draw each graph again without the JFR file.
 */
class AsyncProfilerConvertTest {

    private static final Object MONITOR = new Object();
    static volatile long sink;

    @TempDir
    Path dir;

    @Test
    void writesFlameGraphsAndGzippedCollapsedStacksForEveryEvent() throws Exception {
        Path jfr = dir.resolve("profile.jfr");
        try (Recording recording = new Recording(Configuration.getConfiguration("profile"))) {
            recording.enable("jdk.JavaMonitorEnter").withThreshold(Duration.ZERO);
            recording.start();
            allocateAndContend();
            recording.stop();
            recording.dump(jfr);
        }

        List<Path> written = AsyncProfiler.convert(jfr, EnumSet.allOf(AsyncProfiler.Event.class), dir);

        assertThat(written).extracting(p -> p.getFileName().toString()).containsExactly(
                "cpu.html", "alloc.html", "lock.html", "cpu.collapsed.gz", "alloc.collapsed.gz", "lock.collapsed.gz");
        assertThat(AsyncProfiler.CPU_COLLAPSED).isEqualTo("cpu.collapsed.gz");
        for (AsyncProfiler.Event event : AsyncProfiler.Event.values()) {
            assertThat(dir.resolve(AsyncProfiler.collapsed(event))).isRegularFile();
            assertThat(dir.resolve(event.name().toLowerCase() + ".collapsed")).doesNotExist();
        }
        assertThat(collapsedLines(AsyncProfiler.Event.ALLOC)).isNotEmpty()
                .allMatch(line -> line.matches(".+ \\d+"));
        assertThat(collapsedLines(AsyncProfiler.Event.LOCK))
                .anyMatch(line -> line.contains("allocateAndContend"));
    }

    private List<String> collapsedLines(AsyncProfiler.Event event) throws Exception {
        try (Stream<String> lines = FrameDiff.lines(dir.resolve(AsyncProfiler.collapsed(event)))) {
            return lines.toList();
        }
    }

    /** Allocates for a while (sampled allocations) and makes one thread wait 50 ms for a monitor. */
    private static void allocateAndContend() throws InterruptedException {
        long end = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < end) {
            byte[] b = new byte[64 * 1024];
            sink += b.length;
        }
        CountDownLatch held = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (MONITOR) {
                held.countDown();
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        holder.start();
        held.await();
        synchronized (MONITOR) {
            sink++;
        }
        holder.join();
    }
}
