package io.kvorum.perf.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.client.KvorumClient;
import io.kvorum.client.RangeReader;
import io.kvorum.perf.PerfMain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ./kvorum perf ycsb} end to end against a real in-process node given with {@code --url}:
 * YCSB in child JVMs, the binding, the workload files, and the report. Small counts keep it quick.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class YcsbCommandTest {

    @TempDir
    Path tmp;

    private final StringWriter err = new StringWriter();

    @Test
    void loadsRunsDThenEAndReportsWhatTheyDid() throws Exception {
        Path run = tmp.resolve("run");
        try (InProcessNode node = InProcessNode.start(tmp.resolve("data"))) {
            int exit = execute("ycsb", "--url", node.uri().toString(), "--workloads", "e,d", "--records", "300",
                    "--operations", "200", "--threads", "2", "--workload-dir", WorkloadTest.WORKLOADS.toString(),
                    "--out", run.toString());

            assertThat(exit).as(err.toString()).isZero();
            JsonObject result = JsonParser.parseString(Files.readString(run.resolve("result.json"))).getAsJsonObject();
            JsonObject load = result.getAsJsonObject("load");
            assertThat(load.getAsJsonObject("operations").getAsJsonObject("INSERT").get("count").getAsLong()).isEqualTo(300);
            JsonObject d = result.getAsJsonArray("workloads").get(0).getAsJsonObject();
            JsonObject e = result.getAsJsonArray("workloads").get(1).getAsJsonObject();
            assertThat(d.get("workload").getAsString()).isEqualTo("D");
            assertThat(e.get("workload").getAsString()).isEqualTo("E");
            long dInserts = d.getAsJsonObject("operations").getAsJsonObject("INSERT").get("count").getAsLong();
            long eInserts = e.getAsJsonObject("operations").getAsJsonObject("INSERT").get("count").getAsLong();
            assertThat(d.getAsJsonObject("notOk").size()).as("D's failures").isZero();
            assertThat(e.getAsJsonObject("notOk").size()).as("E's failures").isZero();
            assertThat(e.getAsJsonObject("operations").getAsJsonObject("SCAN").get("count").getAsLong()).isPositive();
            // E was told about D's records, so its inserts made new keys rather than overwriting D's.
            assertThat(e.get("records").getAsLong()).isEqualTo(300 + dInserts);
            assertThat(countRecords(node)).isEqualTo(300 + dInserts + eInserts);

            String report = Files.readString(run.resolve("report.md"));
            assertThat(report).contains("## Workload D", "## Workload E", "## Load", "| SCAN |", "| INSERT |",
                    "Every operation returned OK", "-db io.kvorum.perf.ycsb.KvorumDB", "## Machine");
            assertThat(report).doesNotContain("## Workload A");
            assertThat(run.resolve("workloadd.txt")).isNotEmptyFile();
            assertThat(run.resolve("workloade.log")).exists();
        }
    }

    @Test
    void addressesBeyondThisMachineAreRefused() {
        int exit = execute("ycsb", "--url", "http://10.1.2.3:8080", "--out", tmp.resolve("run").toString());

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("not a loopback address");
        assertThat(tmp.resolve("run")).doesNotExist();
    }

    @Test
    void clusterSizesOtherThanOneOrThreeAreRefused() {
        assertThat(execute("ycsb", "--nodes", "2", "--workload-dir", WorkloadTest.WORKLOADS.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--nodes must be 1 or 3");
    }

    @Test
    void unknownWorkloadIsRefused() {
        assertThat(execute("ycsb", "--workloads", "a,x", "--workload-dir", WorkloadTest.WORKLOADS.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("unknown workload 'x'");
    }

    private int execute(String... args) {
        CommandLine cli = new CommandLine(new PerfMain());
        cli.setErr(new PrintWriter(err, true));
        cli.setOut(new PrintWriter(new StringWriter(), true));
        return cli.execute(args);
    }

    private static long countRecords(InProcessNode node) throws Exception {
        long n = 0;
        try (KvorumClient client = KvorumClient.create(node.uri());
             RangeReader range = client.range("usertable:", "usertable;")) {
            while (range.next() != null) {
                n++;
            }
        }
        return n;
    }
}
