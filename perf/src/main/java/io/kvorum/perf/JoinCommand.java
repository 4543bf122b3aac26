package io.kvorum.perf;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.cluster.LocalCluster;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Preloader;
import io.kvorum.perf.report.MachineInfo;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvorum perf join}: how long a node takes to join a loaded cluster (SPEC §8). Starts
 * {@code --nodes} nodes (replication factor = nodes), preloads {@code --keys} keys with Debian's wrk,
 * then starts one more node with {@code --join} and times two moments from its launch: accepted
 * (it answers {@code /v0/status}: every member knows it as joining) and joined (every member shows
 * it {@code normal}: its records are in and reads go to it). Writes join.md into the run folder.
 */
@Command(name = "join", mixinStandardHelpOptions = true,
        description = "Time a node's join into a loaded local cluster: preload, start a node with --join, "
                + "wait until every member has it normal.")
final class JoinCommand implements Callable<Integer> {

    private static final Duration JOIN_BOUND = Duration.ofMinutes(30);
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Pattern TOOK = Pattern.compile("joining: took (\\d+) records from (\\S+)");

    @Option(names = "--nodes", description = "Members before the join (default ${DEFAULT-VALUE}).", defaultValue = "3")
    int nodes;

    @Option(names = "--keys", description = "Keys preloaded (default ${DEFAULT-VALUE}).", defaultValue = "1000000")
    long keys;

    @Option(names = "--value-bytes", description = "Value size (default ${DEFAULT-VALUE}).", defaultValue = "100")
    int valueBytes;

    @Option(names = "--jar", description = "Node jar (default ${DEFAULT-VALUE}).", defaultValue = "node/target/kvorum-node.jar")
    Path jar;

    @Option(names = "--heap", description = "Node heap (default ${DEFAULT-VALUE}).", defaultValue = "1g")
    String heap;

    @Option(names = "--out", description = "Run folder (default perf/runs/<yyyyMMdd-HHmmss>-join).")
    Path out;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        if (nodes < 1 || keys < 1 || valueBytes < 1) {
            err.println("kvorum perf join: --nodes, --keys and --value-bytes must be positive");
            return 2;
        }
        Optional<LoadTool> tool = LoadTool.findWrk(System.getenv());
        if (tool.isEmpty()) {
            err.println("kvorum perf join: " + LoadTool.WRK_MISSING);
            return 2;
        }
        Path runDir = RunFolder.create(out, "join");
        String loadBefore = MachineInfo.loadAverage();
        Path scriptDir = Path.of("perf", "wrk").toAbsolutePath();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        List<String> lines = new ArrayList<>();
        err.printf("starting %d node(s) from %s ...%n", nodes, jar);
        try (LocalCluster cluster = LocalCluster.start(new LocalCluster.Spec(nodes, jar, heap, List.of(), List.of(), runDir),
                ClusterSecurity.none())) {
            err.printf("preloading %,d keys of %d bytes ...%n", keys, valueBytes);
            Preloader.Result preload = new Preloader(tool.get(), scriptDir, err)
                    .preload(cluster.coordinator(), keys, valueBytes, "", runDir.resolve("preload.txt"));
            err.println("preloaded " + preload.summary());
            long launched = System.nanoTime();
            String joiner = cluster.join();
            double acceptedSeconds = seconds(launched);
            err.printf("%s accepted as joining after %.1f s; waiting until every member has it normal ...%n",
                    joiner, acceptedSeconds);
            long deadline = System.nanoTime() + JOIN_BOUND.toNanos();
            while (!normalEverywhere(http, cluster, joiner)) {
                if (System.nanoTime() > deadline) {
                    throw new IOException(joiner + " did not become normal within " + JOIN_BOUND.toMinutes() + " min");
                }
                Thread.sleep(POLL.toMillis()); // the poll interval of a bounded wait
            }
            double joinedSeconds = seconds(launched);
            long taken = recordsTaken(cluster.logOf(joiner), lines);
            lines.add(0, String.format(Locale.ROOT, "| %d members, %,d keys of %d bytes (RF %d) | %.1f s | %.1f s | %,d | %,.0f |",
                    nodes, keys, valueBytes, nodes, acceptedSeconds, joinedSeconds, taken, taken / (joinedSeconds - acceptedSeconds)));
            err.printf("%s normal on every member after %.1f s: %,d records taken%n", joiner, joinedSeconds, taken);
            writeReport(runDir, preload, lines, loadBefore);
        }
        err.println("report: " + runDir.resolve("join.md"));
        return 0;
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    private static boolean normalEverywhere(HttpClient http, LocalCluster cluster, String joiner) throws InterruptedException {
        for (String id : cluster.ids()) {
            URI uri = cluster.httpUri(id).resolve("/v0/cluster");
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                if (r.statusCode() != 200 || ClusterView.parse(r.body()).members().stream()
                        .noneMatch(m -> m.id().equals(joiner) && m.isNormal())) {
                    return false;
                }
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    /** The records the joiner's log says it took, summed; each source's line goes to {@code lines}. */
    private static long recordsTaken(Path log, List<String> lines) throws IOException {
        long total = 0;
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            Matcher m = TOOK.matcher(line);
            if (m.find()) {
                total += Long.parseLong(m.group(1));
                lines.add("- " + m.group(2) + ": " + String.format(Locale.ROOT, "%,d", Long.parseLong(m.group(1))) + " records");
            }
        }
        return total;
    }

    private void writeReport(Path runDir, Preloader.Result preload, List<String> lines, String loadBefore)
            throws IOException {
        StringBuilder md = new StringBuilder("# Kvorum perf join\n\n");
        md.append("Command: `").append(RunFolder.commandLine(spec.commandLine().getParseResult().originalArgs()
                .toArray(String[]::new))).append("`\n\n");
        MachineInfo machine = MachineInfo.current();
        md.append("Machine: ").append(machine.cpus()).append(" cpus (").append(machine.cpuModel()).append("), ")
                .append(machine.memory()).append(", kernel ").append(machine.kernel()).append("; load average before: ").append(loadBefore).append("\n\n");
        md.append("Preload: ").append(preload.summary()).append(" (`").append(preload.command()).append("`)\n\n");
        md.append("Times from the joining node's launch: accepted = it serves (every member has it joining); "
                + "joined = every member has it normal (its records are in, reads go to it).\n\n");
        md.append("| cluster | accepted | joined | records taken | records/s |\n|---|---|---|---|---|\n");
        md.append(lines.get(0)).append("\n\nRecords taken, by source:\n\n");
        lines.subList(1, lines.size()).forEach(l -> md.append(l).append('\n'));
        Files.writeString(runDir.resolve("join.md"), md.toString(), StandardCharsets.UTF_8);
    }
}
