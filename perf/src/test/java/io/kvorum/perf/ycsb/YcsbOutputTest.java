package io.kvorum.perf.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Parsing what YCSB 0.17 printed in real runs of the binding (captured under ycsb-output/). */
class YcsbOutputTest {

    @Test
    void readsOverallFiguresAndEveryOperationButCleanupAndGc() throws IOException {
        YcsbOutput out = YcsbOutput.parse(captured("workloadf-1node.txt"));

        assertThat(out.runtimeMs()).isEqualTo(9204);
        assertThat(out.throughput()).isEqualTo(217.296827466319);
        assertThat(out.operations()).containsOnlyKeys("READ", "READ-MODIFY-WRITE", "UPDATE");
        YcsbOutput.Operation update = out.operations().get("UPDATE");
        assertThat(update.count()).isEqualTo(991);
        assertThat(update.averageUs()).isEqualTo(13360.604439959638);
        assertThat(update.minUs()).isEqualTo(1929);
        assertThat(update.maxUs()).isEqualTo(250495);
        assertThat(update.percentilesUs()).containsExactly(
                Map.entry("50", 7883.0), Map.entry("95", 31407.0), Map.entry("99", 148863.0), Map.entry("99.9", 250495.0));
        assertThat(update.returns()).containsExactly(Map.entry("OK", 991L));
        assertThat(out.failuresByStatus()).isEmpty();
    }

    @Test
    void readModifyWritesAreCountedOnceInTheTotal() throws IOException {
        // operationcount was 2000: 1009 reads and 991 read-modify-writes, each also measured as a READ and an UPDATE.
        assertThat(YcsbReport.totalOperations(YcsbOutput.parse(captured("workloadf-1node.txt")))).isEqualTo(2000);
    }

    @Test
    void failedOperationsAreCountedByStatusAndAttempted() throws IOException {
        YcsbOutput out = YcsbOutput.parse(captured("workloada-unreachable.txt"));

        assertThat(out.failuresByStatus()).isEqualTo(Map.of("READ", Map.of("ERROR", 22L), "UPDATE", Map.of("ERROR", 28L)));
        assertThat(out.operations().get("READ").count()).isZero();
        assertThat(out.operations().get("READ-FAILED").count()).isEqualTo(22);
        assertThat(out.attempted("UPDATE")).isEqualTo(28);
        assertThat(out.attempted("INSERT")).isZero();
        assertThat(YcsbReport.totalOperations(out)).isEqualTo(50);
    }

    @Test
    void insertsOfWorkloadDAreAttemptedWhetherOrNotTheySucceeded() throws IOException {
        YcsbOutput out = YcsbOutput.parse(captured("workloadd-1node.txt"));

        assertThat(out.attempted("INSERT")).isEqualTo(out.operations().get("INSERT").count()).isPositive();
    }

    @Test
    void outputWithoutOverallFiguresIsAnUnfinishedPhase() {
        List<String> cut = List.of("[READ], Operations, 10", "[READ], Return=OK, 10");

        assertThatThrownBy(() -> YcsbOutput.parse(cut)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("OVERALL");
        assertThatThrownBy(() -> YcsbOutput.parse(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void linesThatAreNotMeasurementsAreIgnored() {
        YcsbOutput out = YcsbOutput.parse(List.of(
                "Loading workload...", "[OVERALL], RunTime(ms), 10", "[broken line", "[OVERALL], Throughput(ops/sec), 5.5",
                "[INSERT], Operations, 3", "[INSERT], Return=OK, 3"));

        assertThat(out.throughput()).isEqualTo(5.5);
        assertThat(out.operations()).containsOnlyKeys("INSERT");
    }

    static List<String> captured(String name) throws IOException {
        try (InputStream in = YcsbOutputTest.class.getResourceAsStream("/ycsb-output/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }
}
