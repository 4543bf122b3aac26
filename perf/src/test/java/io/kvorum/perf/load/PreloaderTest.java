package io.kvorum.perf.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Preloader against fake tools: shell scripts that print what preload.lua would, then keep running as wrk does. */
@Timeout(30)
class PreloaderTest {

    private static final URI TARGET = URI.create("http://127.0.0.1:8080");

    @TempDir
    Path dir;

    @Test
    void wrk2GetsAnUnboundedRateAndTheStepIsTheThreadCount() {
        Preloader wrk2 = new Preloader(new LoadTool(Path.of("/opt/wrk2"), true), Path.of("/w"), System.err);
        assertThat(wrk2.command(TARGET, 200_000)).containsExactly("/opt/wrk2", "-t2", "-c64",
                "-d" + (Preloader.timeout(200_000).toSeconds() + 60) + "s", "-R10000000", "-s", "/w/preload.lua",
                "http://127.0.0.1:8080", "--", "2");

        Preloader wrk = new Preloader(new LoadTool(Path.of("/usr/bin/wrk"), false), Path.of("/w"), System.err);
        assertThat(wrk.command(TARGET, 1)).contains("-t1", "--", "1").doesNotContain("-R10000000");
    }

    @Test
    void stopsTheToolOnceEveryThreadIsDone() throws Exception {
        // After the done lines the fake runs for 10 minutes, as wrk would for its -d; the class timeout fails a wait for it.
        Path tool = fakeTool("""
                echo "Running 10m test @ $1"
                echo "kvorum-preload 0 3 3 done"
                echo "kvorum-preload 1 2 2 done"
                exec sleep 600
                """);
        ByteArrayOutputStream log = new ByteArrayOutputStream();

        Preloader.Result result = new Preloader(new LoadTool(tool, true), dir, new PrintStream(log, true, StandardCharsets.UTF_8))
                .preload(TARGET, 5, 16, "", dir.resolve("preload.txt"));

        assertThat(result.keys()).isEqualTo(5);
        assertThat(result.command()).startsWith("KEYS=5 VALUE_BYTES=16 " + tool).contains("-R10000000");
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("preload 100.0%  5/5 keys");
        assertThat(Files.readAllLines(dir.resolve("preload.txt"))).contains("kvorum-preload 1 2 2 done");
    }

    @Test
    void non2xxAnswersFailThePreloadWithTheirCountAndStatus() throws Exception {
        Path tool = fakeTool("""
                echo "kvorum-preload 0 3 1 done 503=2"
                echo "kvorum-preload 1 2 2 done"
                exec sleep 600
                """);

        assertThatThrownBy(() -> new Preloader(new LoadTool(tool, true), dir, new PrintStream(new ByteArrayOutputStream()))
                .preload(TARGET, 5, 16, "", dir.resolve("preload.txt")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("2 of 5 keys not written")
                .hasMessageContaining("503: 2");
    }

    @Test
    void aToolThatExitsBeforeEveryThreadIsDoneFailsWithItsOutput() throws Exception {
        Path tool = fakeTool("""
                echo "kvorum-preload 1 2 2 done"
                echo "unable to connect to 127.0.0.1:8080 Connection refused"
                exit 1
                """);

        assertThatThrownBy(() -> new Preloader(new LoadTool(tool, false), dir, new PrintStream(new ByteArrayOutputStream()))
                .preload(TARGET, 5, 16, "", dir.resolve("preload.txt")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("wrk exited with 1 before every thread was done")
                .hasMessageContaining("1 thread(s) not done")
                .hasMessageContaining("Connection refused");
    }

    @Test
    void sharesThatDoNotAddUpToTheKeysAreAnError() throws Exception {
        // what preload.lua reports when its step argument is not the tool's -t
        Path tool = fakeTool("""
                echo "kvorum-preload 0 5 5 done"
                echo "kvorum-preload 1 4 4 done"
                exec sleep 600
                """);

        assertThatThrownBy(() -> new Preloader(new LoadTool(tool, true), dir, new PrintStream(new ByteArrayOutputStream()))
                .preload(TARGET, 5, 16, "", dir.resolve("preload.txt")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("shared 9 keys, not 5");
    }

    /** A tool taking wrk's arguments ($1 -t, $2 -c, ...) that runs {@code body}. */
    private Path fakeTool(String body) throws IOException {
        Path tool = dir.resolve("fake-wrk");
        Files.writeString(tool, "#!/bin/sh\nshift $(($# - 3))\n" + body);
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwx------"));
        return tool;
    }
}
