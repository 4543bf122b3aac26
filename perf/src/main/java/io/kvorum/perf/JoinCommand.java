package io.kvorum.perf;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.cluster.LocalCluster;
import io.kvorum.perf.load.LoadRunner;
import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.LoadTool;
import io.kvorum.perf.load.Preloader;
import io.kvorum.perf.load.Workload;
import io.kvorum.perf.load.WrkOutput;
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
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvorum perf join}: how long a node takes to join a loaded cluster (docs/operations.md#growing-and-shrinking-a-cluster). Starts
 * {@code --nodes} nodes (replication factor = nodes), preloads {@code --keys} keys with Debian's wrk,
 * then starts one more node with {@code --join} and times two moments from its launch: accepted
 * (it answers {@code /v0/status}: every member knows it as joining) and joined (every member shows
 * it {@code normal}: its records are in and reads go to it). Writes join.md into the run folder.
 * With {@code --rate}, a wrk2 load on n1 is measured before the join and from the joiner's launch;
 * {@code --warmup} runs it unrecorded first, so that the window before the join is not the cluster's
 * cold first minutes.
 */
@Command(name = "join", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
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

    @Option(names = "--rate", description = "With wrk2: a mixed load (half gets) of this many requests/s on n1, "
            + "measured for --load-duration before the join and again from the joiner's launch (default: no load).")
    Integer rate;

    @Option(names = "--load-duration", description = "Length of each measured load (default ${DEFAULT-VALUE}).",
            defaultValue = "60s", converter = LoadOptions.DurationConverter.class)
    Duration loadDuration;

    @Option(names = "--warmup", description = "With --rate: the same load first, not recorded, so that the window before "
            + "the join starts on a cluster past its first minutes (JIT, first anti-entropy rounds) (default ${DEFAULT-VALUE}).",
            defaultValue = "0s", converter = LoadOptions.DurationConverter.class)
    Duration warmup;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        if (nodes < 1 || keys < 1 || valueBytes < 1) {
            err.println("kvorum perf join: --nodes, --keys and --value-bytes must be positive");
            return 2;
        }
        Optional<String> timing = LoadOptions.timingProblem("--load-duration", loadDuration, warmup);
        if (timing.isEmpty() && rate == null && !warmup.isZero()) {
            timing = Optional.of("--warmup is the client load before the measured one: it needs --rate");
        }
        if (timing.isPresent()) {
            err.println("kvorum perf join: " + timing.get());
            return 2;
        }
        Optional<LoadTool> tool = LoadTool.findWrk(System.getenv());
        if (tool.isEmpty()) {
            err.println("kvorum perf join: " + LoadTool.WRK_MISSING);
            return 2;
        }
        Optional<LoadTool> fixedRate = rate == null ? Optional.empty() : LoadTool.findWrk2(System.getenv());
        if (rate != null && (rate < 1 || fixedRate.isEmpty())) {
            err.println("kvorum perf join: " + (rate < 1 ? "--rate must be positive" : LoadTool.wrk2Missing(System.getenv())));
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
            LoadSpec load = null;
            WrkOutput before = null;
            if (fixedRate.isPresent()) {
                load = new LoadSpec(Workload.MIXED, scriptDir, cluster.coordinator(), (int) Math.min(keys, Integer.MAX_VALUE),
                        valueBytes, null, null, 0, 0.5, rate, loadDuration, 64, 1);
                if (!warmup.isZero()) {
                    err.printf("warming up at %,d requests/s for %d s (not recorded) ...%n", rate, warmup.toSeconds());
                    new LoadRunner(fixedRate.get()).run(load.withDuration(warmup), runDir.resolve("load-warmup.txt"));
                }
                err.printf("measuring %,d requests/s for %d s before the join ...%n", rate, loadDuration.toSeconds());
                before = new LoadRunner(fixedRate.get()).run(load, runDir.resolve("load-before.txt"));
            }
            CompletableFuture<WrkOutput> during = load == null ? null
                    : MeasuredLoad.start(new LoadRunner(fixedRate.get()), load, runDir.resolve("load-during.txt"), "join-load");
            long launched = System.nanoTime();
            String joiner = cluster.join();
            double acceptedSeconds = MeasuredLoad.secondsSince(launched);
            err.printf("%s accepted as joining after %.1f s; waiting until every member has it normal ...%n",
                    joiner, acceptedSeconds);
            long deadline = System.nanoTime() + JOIN_BOUND.toNanos();
            while (!normalEverywhere(http, cluster, joiner)) {
                if (System.nanoTime() > deadline) {
                    throw new IOException(joiner + " did not become normal within " + JOIN_BOUND.toMinutes() + " min");
                }
                Thread.sleep(POLL.toMillis()); // the poll interval of a bounded wait
            }
            double joinedSeconds = MeasuredLoad.secondsSince(launched);
            long taken = recordsTaken(cluster.logOf(joiner), lines);
            lines.add(0, String.format(Locale.ROOT, "| %d members, %,d keys of %d bytes (RF %d) | %.1f s | %.1f s | %,d | %,.0f |",
                    nodes, keys, valueBytes, nodes, acceptedSeconds, joinedSeconds, taken, taken / (joinedSeconds - acceptedSeconds)));
            err.printf("%s normal on every member after %.1f s: %,d records taken%n", joiner, joinedSeconds, taken);
            if (during != null) {
                lines.add("");
                lines.add(String.format(Locale.ROOT, "Client load on n1, `%s`%s:", load.shellLine(fixedRate.get()),
                        warmup.isZero() ? ", from the end of the preload"
                                : String.format(Locale.ROOT, ", after %d s of it not recorded (--warmup)", warmup.toSeconds())));
                lines.add("");
                lines.add(MeasuredLoad.LOAD_TABLE_HEAD.strip());
                lines.add(MeasuredLoad.row("before the join", before));
                lines.add(MeasuredLoad.row(String.format(Locale.ROOT, "the first %d s of the join", loadDuration.toSeconds()),
                        during.get()));
            }
            writeReport(runDir, preload, lines, loadBefore);
        }
        err.println("report: " + runDir.resolve("join.md"));
        return 0;
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
        StringBuilder md = MeasuredLoad.reportHead("Kvorum perf join", spec, loadBefore, preload);
        md.append("Times from the joining node's launch: accepted = it serves (every member has it joining); "
                + "joined = every member has it normal (its records are in, reads go to it).\n\n");
        md.append("| cluster | accepted | joined | records taken | records/s |\n|---|---|---|---|---|\n");
        md.append(lines.get(0)).append("\n\nRecords taken, by source, and the client load if there was one:\n\n");
        lines.subList(1, lines.size()).forEach(l -> md.append(l).append('\n'));
        Files.writeString(runDir.resolve("join.md"), md.toString(), StandardCharsets.UTF_8);
    }
}
