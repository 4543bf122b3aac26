package io.kvorum.perf.profile;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link AsyncProfiler#start} as `perf run --profile` asks for it, in this JVM (async-profiler's Java API). */
class AsyncProfilerStartTest {

    static volatile Object sink;

    @TempDir
    Path dir;

    @Test
    void theStartCommandNamesTheCpuEventOnlyWhenCpuIsProfiled() {
        Path jfr = Path.of("/runs/r/profile.jfr");

        assertThat(AsyncProfiler.startCommand(EnumSet.allOf(AsyncProfiler.Event.class), jfr))
                .isEqualTo("start,event=cpu,alloc,lock,jfr,file=/runs/r/profile.jfr");
        assertThat(AsyncProfiler.startCommand(EnumSet.of(AsyncProfiler.Event.ALLOC), jfr))
                .isEqualTo("start,alloc,jfr,file=/runs/r/profile.jfr");
        assertThat(AsyncProfiler.startCommand(EnumSet.of(AsyncProfiler.Event.ALLOC, AsyncProfiler.Event.LOCK), jfr))
                .isEqualTo("start,alloc,lock,jfr,file=/runs/r/profile.jfr");
    }

    @Test
    void allocationsAloneAreRecordedWithoutCpuSamples() throws Exception {
        AsyncProfiler profiler = AsyncProfiler.start(ProcessHandle.current().pid(), EnumSet.of(AsyncProfiler.Event.ALLOC), dir);
        for (int i = 0; i < 200_000; i++) {
            sink = new byte[1024 + (i & 1023)];
        }
        Path jfr = profiler.stop();

        Map<String, Integer> events = new HashMap<>();
        try (RecordingFile file = new RecordingFile(jfr)) {
            while (file.hasMoreEvents()) {
                RecordedEvent event = file.readEvent();
                events.merge(event.getEventType().getName(), 1, Integer::sum);
            }
        }
        assertThat(events.keySet()).anyMatch(name -> name.startsWith("jdk.ObjectAllocation"));
        assertThat(events).doesNotContainKey("jdk.ExecutionSample");
    }
}
