package io.kvorum.perf;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.cluster.LocalCluster;
import io.kvorum.perf.load.Preloader;
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
import picocli.CommandLine.Mixin;
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

    @Mixin
    MeasuredLoad measured;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        Optional<String> problem = measured.problem();
        if (problem.isPresent()) {
            err.println("kvorum perf join: " + problem.get());
            return 2;
        }
        Path runDir = RunFolder.create(measured.out, "join");
        String loadBefore = MachineInfo.loadAverage();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        List<String> lines = new ArrayList<>();
        err.printf("starting %d node(s) from %s ...%n", measured.nodes, measured.jar);
        try (LocalCluster cluster = LocalCluster.start(measured.cluster(List.of(), runDir), ClusterSecurity.none())) {
            MeasuredLoad.Before before = measured.measureBefore(cluster, runDir, "before the join", err);
            CompletableFuture<WrkOutput> during = measured.startBeside(before, runDir, "join-load");
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
                    measured.nodes, measured.keys, measured.valueBytes, measured.nodes, acceptedSeconds, joinedSeconds, taken,
                    taken / (joinedSeconds - acceptedSeconds)));
            err.printf("%s normal on every member after %.1f s: %,d records taken%n", joiner, joinedSeconds, taken);
            if (during != null) {
                lines.add("");
                lines.add(measured.loadSection(before, "before the join", during.get(),
                        String.format(Locale.ROOT, "the first %d s of the join", measured.loadDuration.toSeconds())).strip());
            }
            writeReport(runDir, before.preload(), lines, loadBefore);
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
