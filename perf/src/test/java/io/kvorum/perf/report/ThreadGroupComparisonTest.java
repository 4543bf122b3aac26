package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ThreadGroupComparisonTest {

    private static ThreadGroupUse group(String name, double cpuSeconds) {
        return new ThreadGroupUse(name, 1, cpuSeconds, 0, 100);
    }

    /** A run that answered {@code requests} requests, its servers' thread groups as given. */
    private static RunResult run(long requests, Map<String, List<ThreadGroupUse>> threads) {
        CpuUse cpu = threads == null ? null : new CpuUse(1, 2, 60, null, threads);
        return new RunResult("put-3n", RunResult.CLOSED_LOOP, "put", 3, 0, requests / 60.0, 60, requests, 0, Map.of(), 0,
                Map.of(), 1, List.of(), 0, null, null, cpu);
    }

    @Test
    void eachGroupsMicrosPerRequestSideBySideWithTheLargestMoveFromTheBaseline() {
        Map<String, List<ThreadGroupUse>> off = new LinkedHashMap<>();
        off.put("n1", List.of(group("net-io", 18.0), group("storage-writer", 7.0), group("ZWorker", 0.4), group("maintenance", 0.1)));
        off.put("n2", List.of(group("storage-writer", 7.0), group("net-io", 3.5)));
        Map<String, List<ThreadGroupUse>> on = new LinkedHashMap<>();
        on.put("n1", List.of(group("net-io", 18.0), group("storage-writer", 7.0), group("ZWorker", 0.5),
                group("anti-entropy-re", 0.3), group("maintenance", 0.1)));
        on.put("n2", List.of(group("storage-writer", 6.0), group("net-io", 3.5), group("anti-entropy-re", 0.2)));

        // 1,000,000 requests: a CPU second is 1 µs per request
        String md = ThreadGroupComparison.markdown(List.of("off", "on"), List.of(run(1_000_000, off), run(1_000_000, on)), 3);

        assertThat(md).startsWith("## Time on a core per request, by thread group (vs off)\n\n")
                .contains("| server threads | off | on | change |")
                .contains("| n1 net-io | 18.00 | 18.00 | +0.00 |")
                .contains("| n1 storage-writer | 7.00 | 7.00 | +0.00 |")
                .contains("| n1 ZWorker | 0.40 | 0.50 | +0.10 |")
                // n1's anti-entropy thread is not among its 3 busiest groups in any run: it counts in the others
                .contains("| n1 other groups | 0.10 | 0.40 | +0.30 |")
                .contains("| **n1 all** | 25.50 | 25.90 | +0.40 |")
                .contains("| n2 storage-writer | 7.00 | 6.00 | -1.00 |")
                .contains("| n2 anti-entropy-re | – | 0.20 | +0.20 |")
                .contains("| **n2 all** | 10.50 | 9.70 | -0.80 |")
                .doesNotContain("n1 anti-entropy-re")
                .doesNotContain("n2 other groups");
        // n1's rows come before n2's, each server's busiest first, its total last
        assertThat(md.indexOf("| n1 net-io")).isLessThan(md.indexOf("| n1 ZWorker"));
        assertThat(md.indexOf("| n1 ZWorker")).isLessThan(md.indexOf("| **n1 all**"));
        assertThat(md.indexOf("| **n1 all**")).isLessThan(md.indexOf("| n2 storage-writer"));
    }

    @Test
    void aGroupAmongTheBusiestOfOneRunShowsItsFigureInEveryRun() {
        Map<String, List<ThreadGroupUse>> quiet = Map.of("n1", List.of(group("net-io", 10.0), group("anti-entropy", 2.0),
                group("maintenance", 0.5)));
        Map<String, List<ThreadGroupUse>> busy = Map.of("n1", List.of(group("anti-entropy", 12.0), group("net-io", 9.0),
                group("maintenance", 0.5)));

        String md = ThreadGroupComparison.markdown(List.of("quiet", "busy"), List.of(run(1_000_000, quiet), run(1_000_000, busy)), 1);

        assertThat(md).contains("| n1 anti-entropy | 2.00 | 12.00 | +10.00 |")
                .contains("| n1 net-io | 10.00 | 9.00 | -1.00 |")
                .contains("| n1 other groups | 0.50 | 0.50 | +0.00 |")
                .contains("| **n1 all** | 12.50 | 21.50 | +9.00 |");
        assertThat(md.indexOf("| n1 anti-entropy")).isLessThan(md.indexOf("| n1 net-io"));
    }

    @Test
    void theLargestMoveKeepsItsSignAcrossSeveralRuns() {
        Map<String, List<ThreadGroupUse>> base = Map.of("n1", List.of(group("net-io", 20.0)));
        Map<String, List<ThreadGroupUse>> less = Map.of("n1", List.of(group("net-io", 17.0)));
        Map<String, List<ThreadGroupUse>> more = Map.of("n1", List.of(group("net-io", 21.0)));

        String md = ThreadGroupComparison.markdown(List.of("a", "b", "c"),
                List.of(run(1_000_000, base), run(1_000_000, less), run(1_000_000, more)), 6);

        assertThat(md).contains("| n1 net-io | 20.00 | 17.00 | 21.00 | -3.00 |");
    }

    @Test
    void aServerTheBaselineDidNotRunHasNoChange() {
        Map<String, List<ThreadGroupUse>> nginx = Map.of("nginx", List.of(group("nginx", 7.0)));
        Map<String, List<ThreadGroupUse>> node = Map.of("n1", List.of(group("net-io", 10.0), group("storage-writer", 4.0)));

        String md = ThreadGroupComparison.markdown(List.of("nginx-put", "put-1n"), List.of(run(1_000_000, nginx), run(2_000_000, node)), 6);

        assertThat(md).contains("| nginx nginx | 7.00 | – | +0.00 |")
                .contains("| n1 net-io | – | 5.00 | – |")
                .contains("| **n1 all** | – | 7.00 | – |");
    }

    @Test
    void aRunWithoutThreadMeasurementsIsNamedInsteadOfATable() {
        Map<String, List<ThreadGroupUse>> node = Map.of("n1", List.of(group("net-io", 10.0)));

        String md = ThreadGroupComparison.markdown(List.of("old", "new", "bsd"),
                List.of(run(1_000_000, null), run(1_000_000, node), run(1_000_000, Map.of())), 6);

        assertThat(md).contains("No thread measurement for old, bsd, so no thread comparison.")
                .doesNotContain("| server threads");
    }
}
