package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ThreadWaitsTest {

    @TempDir
    Path proc;

    /** Writes one thread as /proc shows it: its name and "run wait scheduled". */
    private void thread(long pid, long tid, String name, long runNanos, long waitNanos, long scheduled) throws IOException {
        Path task = Files.createDirectories(proc.resolve(pid + "/task/" + tid));
        Files.writeString(task.resolve("comm"), name + "\n");
        Files.writeString(task.resolve("schedstat"), runNanos + " " + waitNanos + " " + scheduled + "\n");
    }

    @Test
    void groupsTheThreadsOfAServerAndItsDescendantsAndCountsOnlyTheRun() throws Exception {
        thread(10, 11, "net-io-1", 5_000_000_000L, 1_000_000_000L, 1000);
        thread(10, 12, "net-io-2", 4_000_000_000L, 2_000_000_000L, 2000);
        thread(10, 13, "storage-writer-", 1_000_000_000L, 500_000_000L, 100);
        thread(20, 21, "nginx", 100, 100, 1);
        Supplier<List<Long>> n1 = () -> List.of(10L);
        Supplier<List<Long>> nginx = () -> List.of(20L, 30L); // its worker 30 starts during the run
        ThreadWaits waits = ThreadWaits.start(new java.util.LinkedHashMap<>(Map.of("n1", n1)), proc);
        ThreadWaits baseline = ThreadWaits.start(Map.of("nginx", nginx), proc);

        thread(10, 11, "net-io-1", 6_000_000_000L, 2_000_000_000L, 1500);
        thread(10, 12, "net-io-2", 5_000_000_000L, 3_000_000_000L, 2500);
        thread(10, 13, "storage-writer-", 3_000_000_000L, 1_500_000_000L, 300);
        thread(10, 14, "C2 CompilerThre", 100_000_000L, 0, 3); // started during the run: counted from zero
        thread(20, 21, "nginx", 200_000_100L, 100_000_100L, 11);
        thread(30, 31, "nginx", 300_000_000L, 50_000_000L, 5);

        Map<String, List<ThreadGroupUse>> n1Groups = waits.stop();
        assertThat(n1Groups).containsOnlyKeys("n1");
        assertThat(n1Groups.get("n1")).containsExactly(
                new ThreadGroupUse("net-io", 2, 2.0, 2.0, 1000),
                new ThreadGroupUse("storage-writer", 1, 2.0, 1.0, 200),
                new ThreadGroupUse("C2 CompilerThre", 1, 0.1, 0.0, 3));
        ThreadGroupUse nginxGroup = baseline.stop().get("nginx").get(0);
        assertThat(nginxGroup.threads()).isEqualTo(2);
        assertThat(nginxGroup.cpuSeconds()).isCloseTo(0.5, within(1e-9));
        assertThat(nginxGroup.waitSeconds()).isCloseTo(0.15, within(1e-9));
        assertThat(nginxGroup.scheduled()).isEqualTo(15);
    }

    @Test
    void aServerWhoseThreadsCannotBeReadIsLeftOut() throws Exception {
        Files.createDirectories(proc.resolve("40/task/41")); // no schedstat: a kernel without the statistics
        ThreadWaits waits = ThreadWaits.start(Map.of("gone", () -> List.of(99L), "bare", () -> List.of(40L)), proc);

        assertThat(waits.stop()).isEmpty();
    }

    @Test
    void aGroupIsTheNameWithoutItsTrailingNumber() {
        assertThat(ThreadWaits.groupOf("net-io-12")).isEqualTo("net-io");
        assertThat(ThreadWaits.groupOf("ZWorker#0")).isEqualTo("ZWorker");
        assertThat(ThreadWaits.groupOf("storage-writer-")).isEqualTo("storage-writer");
        assertThat(ThreadWaits.groupOf("grpc-default-wo")).isEqualTo("grpc-default-wo");
        assertThat(ThreadWaits.groupOf("java")).isEqualTo("java");
        assertThat(ThreadWaits.groupOf("42")).isEqualTo("42");
    }

    @Test
    void theTableShowsTheBusiestGroupsTheRestAndTheWholeServerPerRequest() {
        List<ThreadGroupUse> groups = List.of(
                new ThreadGroupUse("net-io", 2, 3.0, 3.0, 150_000),
                new ThreadGroupUse("storage-writer", 1, 2.0, 1.0, 50_000),
                new ThreadGroupUse("C2 CompilerThre", 1, 0.4, 0.2, 1000),
                new ThreadGroupUse("ZWorker", 1, 0.1, 0.1, 500));

        String md = ThreadWaits.markdown("n1", groups, 500_000, 2);

        assertThat(md).contains("| net-io | 2 | 3.000 s | 3.000 s | 1.00 s | 150,000 | 20.0 µs |")
                .contains("| storage-writer | 1 | 2.000 s | 1.000 s | 0.50 s | 50,000 | 20.0 µs |")
                .contains("| the other 2 groups | 2 | 0.500 s | 0.300 s | 0.60 s | 1,500 | 200.0 µs |")
                .contains("| **all** | 5 | 5.500 s | 4.300 s |")
                .contains("Per request answered: 11.0 µs on a core, 8.6 µs waiting for one.")
                .doesNotContain("| ZWorker |");
    }

    @Test
    void aRunWhoseCompilersTookOverSevenPercentIsSaidNotToBeTheSteadyState() {
        Map<String, List<ThreadGroupUse>> compiling = new java.util.LinkedHashMap<>();
        compiling.put("n1", List.of(new ThreadGroupUse("net-io", 2, 8.0, 8.0, 1000),
                new ThreadGroupUse("C2 CompilerThre", 1, 0.9, 0.5, 100), new ThreadGroupUse("C1 CompilerThre", 1, 0.1, 0, 10)));
        compiling.put("n2", List.of(new ThreadGroupUse("storage-writer", 1, 4.5, 1.0, 500),
                new ThreadGroupUse("C2 CompilerThre", 1, 0.5, 0.5, 100)));
        CpuUse warmingUp = new CpuUse(14.0, 20.0, 15.0, Map.of(), compiling);

        assertThat(warmingUp.compilerShare()).isCloseTo(1.5 / 14.0, within(1e-9));
        assertThat(warmingUp.threadsMarkdown(1000))
                .contains("**Not the steady state:** the JIT compilers took 10.7% of the servers' CPU during the measured run "
                        + "(n1 1.00 s, n2 0.50 s)");

        Map<String, List<ThreadGroupUse>> warm = Map.of("n1", List.of(new ThreadGroupUse("net-io", 2, 9.4, 8.0, 1000),
                new ThreadGroupUse("C2 CompilerThre", 1, 0.6, 0.5, 100)));
        CpuUse steady = new CpuUse(10.0, 20.0, 15.0, Map.of(), warm);
        assertThat(steady.compilerShare()).isCloseTo(0.06, within(1e-9));
        assertThat(steady.threadsMarkdown(1000)).startsWith("## Waiting for a core").doesNotContain("Not the steady state");
        assertThat(new CpuUse(1.0, 2.0, 1.0, Map.of(), null).compilerShare()).isZero();
    }

    @Test
    void readsThisProcesssOwnThreadsFromTheKernel() {
        CpuMeter meter = CpuMeter.start(Map.of("self", ProcessHandle.current()));
        long spun = CpuMeterTest.spin(200_000_000L);

        CpuUse use = meter.stop();

        assertThat(spun).isGreaterThanOrEqualTo(200_000_000L);
        List<ThreadGroupUse> self = use.threadsByServer().get("self");
        assertThat(self).isNotEmpty();
        assertThat(self.stream().mapToDouble(ThreadGroupUse::cpuSeconds).sum()).isGreaterThanOrEqualTo(0.18);
        assertThat(self.get(0).cpuSeconds()).isGreaterThanOrEqualTo(self.get(self.size() - 1).cpuSeconds());
        assertThat(use.threadsMarkdown(1000)).startsWith("## Waiting for a core").contains("| self threads |");
    }
}
