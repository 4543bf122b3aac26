package io.kvorum.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcCpuTest {

    @TempDir
    Path proc;

    /** A real line's shape; utime (field 14) = 1500 and stime (field 15) = 250 ticks. */
    private static String stat(long pid, String comm, long utime, long stime) {
        return pid + " (" + comm + ") S 1 " + pid + " " + pid + " 0 -1 4194560 51234 0 12 0 " + utime + " " + stime
                + " 0 0 20 0 57 0 1234567 3456789012 123456 18446744073709551615 1 1 0 0 0 0 0 4096 17663 0 0 0 17 1 0 0\n";
    }

    private void write(long pid, String comm, long utime, long stime) throws IOException {
        Files.createDirectories(proc.resolve(Long.toString(pid)));
        Files.writeString(proc.resolve(pid + "/stat"), stat(pid, comm, utime, stime));
    }

    @Test
    void userAndSystemTicksAreReadPastACommandNameWithSpacesAndParentheses() {
        assertThat(ProcCpu.ticks(stat(4242, "java", 1500, 250))).isEqualTo(1750);
        assertThat(ProcCpu.ticks(stat(7, "etcd (n1) x 9 9", 30, 12))).isEqualTo(42);
        assertThatThrownBy(() -> ProcCpu.ticks("4242 java S 1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ProcCpu.ticks("4242 (java) S 1 2 3")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void cpuPerRequestIsTheServersTicksBetweenTwoSamplesOverTheRequests() throws Exception {
        write(11, "java", 1000, 200);
        write(12, "java", 500, 100);
        write(99, "java", 50, 10);
        ProcCpu.Sample before = ProcCpu.Sample.read(proc, List.of(11L, 12L), 99);
        write(11, "java", 1300, 260); // +360 ticks
        write(12, "java", 700, 140); //  +240 ticks
        write(99, "java", 130, 30); //   client +100 ticks
        ProcCpu.Sample after = ProcCpu.Sample.read(proc, List.of(11L, 12L), 99);

        assertThat(before.serverTicks()).isEqualTo(1800);
        assertThat(after.serverTicks()).isEqualTo(2400);
        ProcCpu.Window w = ProcCpu.Window.between(before, new ProcCpu.Sample(after.serverTicks(), after.clientTicks(),
                before.nanoTime() + 3_000_000_000L), 100);
        assertThat(w.serverSeconds()).isCloseTo(6.0, within(1e-9));
        assertThat(w.clientSeconds()).isCloseTo(1.0, within(1e-9));
        assertThat(w.wallSeconds()).isCloseTo(3.0, within(1e-9));
        // 6 s of server CPU over 30,000 requests: 200 µs each; the client's 1 s: 33.3 µs
        assertThat(w.serverMicrosPerRequest(30_000)).isCloseTo(200.0, within(1e-9));
        assertThat(w.clientMicrosPerRequest(30_000)).isCloseTo(33.333, within(1e-3));
        assertThat(w.serverCores()).isCloseTo(2.0, within(1e-9));
        assertThat(w.serverMicrosPerRequest(0)).isNaN();
    }

    @Test
    void aServerThatExitedOrWasReplacedIsNamedNotCountedAsZero() throws Exception {
        write(99, "java", 1, 1);
        assertThatThrownBy(() -> ProcCpu.Sample.read(proc, List.of(12345L), 99))
                .isInstanceOf(IOException.class).hasMessageContaining("12345").hasMessageContaining("exited");
        assertThatThrownBy(() -> ProcCpu.Window.between(new ProcCpu.Sample(500, 10, 0), new ProcCpu.Sample(100, 20, 1), 100))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void thisJvmsOwnLineIsReadable() throws Exception {
        ProcCpu.Sample now = ProcCpu.Sample.read(Path.of("/proc"), List.of(), ProcessHandle.current().pid());
        assertThat(now.clientTicks()).isPositive();
        assertThat(ProcCpu.ticksPerSecond()).isPositive();
    }
}
