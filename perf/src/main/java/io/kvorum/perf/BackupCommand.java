package io.kvorum.perf;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.cluster.LocalCluster;
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
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvorum perf backup}: what a backup costs clients and how long a backup and a restore
 * take (docs/operations.md#backup-and-restore). Starts {@code --nodes} nodes (replication factor =
 * nodes) writing backups under the run folder, preloads {@code --keys} keys with Debian's wrk, and
 * times {@code POST /v0/backup} until every member's part is {@code done}, {@code --rounds} times
 * one after the other. With {@code --rate}, a wrk2 load on n1 is measured in each round for
 * {@code --load-duration} without a backup, then for as long again from the backup's start, and the
 * report gives the medians of the two p99s over the rounds. Then a new cluster of the same size is
 * started, the last backup is loaded into it with {@code kvorum-node.jar restore}, timed, and a sample of keys is read back.
 * Writes backup.md into the run folder; the backup itself is deleted unless {@code --keep-backup}.
 */
@Command(name = "backup", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "Time a backup of a loaded local cluster, with or without a client load, and its restore "
                + "into a new cluster.")
final class BackupCommand implements Callable<Integer> {

    private static final Duration BOUND = Duration.ofMinutes(60);
    private static final Duration POLL = Duration.ofMillis(200);
    /** Keys read back from the restored cluster, spread over the key space. */
    private static final int SAMPLE = 200;

    @Mixin
    MeasuredLoad measured;

    @Option(names = "--node-option", description = "Extra node option for every node, repeatable "
            + "(e.g. --node-option=--anti-entropy-rate=10000, the backup's pace).")
    List<String> nodeOptions = new ArrayList<>();

    @Option(names = "--restore-rate", description = "Records a second the restore writes (default: the restore tool's own).")
    Integer restoreRate;

    @Option(names = "--rounds", description = "Backups taken one after the other, each with the load measured without "
            + "a backup and then beside it, so that the two are compared side by side; the restore loads the last "
            + "(default ${DEFAULT-VALUE}).", defaultValue = "1")
    int rounds;

    @Option(names = "--keep-backup", description = "Keep the backup's files in the run folder (they are as large as the data).")
    boolean keepBackup;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintStream err = System.err;
        Optional<String> problem = problem();
        if (problem.isPresent()) {
            err.println("kvorum perf backup: " + problem.get());
            return 2;
        }
        Path runDir = RunFolder.create(measured.out, "backup");
        Path backups = runDir.resolve("backups").toAbsolutePath();
        String loadBefore = MachineInfo.loadAverage();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        List<String> options = new ArrayList<>(nodeOptions);
        options.add("--backup-dir=" + backups);
        StringBuilder md;
        MeasuredLoad.Before before;
        List<Round> done = new ArrayList<>();
        err.printf("starting %d node(s) from %s ...%n", measured.nodes, measured.jar);
        try (LocalCluster cluster = LocalCluster.start(measured.cluster(options, runDir.resolve("original")),
                ClusterSecurity.none())) {
            before = measured.measureBefore(cluster, runDir, "without a backup", err);
            md = MeasuredLoad.reportHead("Kvorum perf backup", spec, loadBefore, before.preload());
            for (int r = 1; r <= rounds; r++) {
                WrkOutput without = before.output();
                if (r > 1 && before.load() != null) {
                    err.printf("round %d: measuring %d s without a backup ...%n", r, measured.loadDuration.toSeconds());
                    without = measured.measureAgain(before, runDir, "load-before-" + r + ".txt");
                }
                done.add(backUp(http, cluster.coordinator(), before, runDir, r, without, err));
            }
        }
        md.append("| round | backup | records (every member's) | bytes | records/s |\n|---|---|---|---|---|\n");
        for (Round round : done) {
            md.append(String.format(Locale.ROOT, "| %d | %.1f s | %,d | %,d | %,.0f |%n", round.number, round.seconds,
                    round.records, round.bytes, round.records / round.seconds));
        }
        md.append(String.format(Locale.ROOT, "%n%d members, %,d keys of %d bytes (RF %d); the backup's pace is the "
                + "anti-entropy pace (--anti-entropy-rate, --anti-entropy-bandwidth).%n%n", measured.nodes, measured.keys,
                measured.valueBytes, measured.nodes));
        if (done.get(0).without != null) {
            md.append(loadReport(before, done)).append('\n');
        }
        String id = done.get(done.size() - 1).id;
        restore(http, runDir, backups.resolve(id), md, err);
        Files.writeString(runDir.resolve("backup.md"), md.toString(), StandardCharsets.UTF_8);
        if (!keepBackup) {
            deleteRecursively(backups);
        }
        err.println("report: " + runDir.resolve("backup.md"));
        return 0;
    }

    /** One backup taken: its time and size, and the load measured before it and beside it (null without --rate). */
    private record Round(int number, String id, double seconds, long records, long bytes, WrkOutput without, WrkOutput with) {
    }

    /** Takes one backup with the load beside it, and waits until both are done. */
    private Round backUp(HttpClient http, URI coordinator, MeasuredLoad.Before before, Path runDir, int number,
            WrkOutput without, PrintStream err) throws IOException, InterruptedException, ExecutionException {
        CompletableFuture<WrkOutput> with = measured.startBeside(before, runDir, "backup-load",
                number == 1 ? "load-during.txt" : "load-during-" + number + ".txt");
        long started = System.nanoTime();
        String id = startBackup(http, coordinator);
        err.printf("round %d: backup %s started; waiting until every member's part is done ...%n", number, id);
        JsonObject state = awaitDone(http, coordinator, id);
        double seconds = MeasuredLoad.secondsSince(started);
        long records = 0;
        long bytes = 0;
        for (var member : state.getAsJsonObject("members").entrySet()) {
            records += member.getValue().getAsJsonObject().get("records").getAsLong();
            bytes += member.getValue().getAsJsonObject().get("bytes").getAsLong();
        }
        err.printf("round %d: backup %s done after %.1f s: %,d records, %,d bytes%n", number, id, seconds, records, bytes);
        return new Round(number, id, seconds, records, bytes, without, with == null ? null : with.get());
    }

    /** The load table, a row without and a row beside the backup per round, then the medians of their p99s. */
    private String loadReport(MeasuredLoad.Before before, List<Round> done) {
        long window = measured.loadDuration.toSeconds();
        List<String> rows = new ArrayList<>();
        double[] p99Without = new double[done.size()];
        double[] p99With = new double[done.size()];
        for (int i = 0; i < done.size(); i++) {
            Round round = done.get(i);
            String prefix = done.size() == 1 ? "" : "round " + round.number + ": ";
            rows.add(MeasuredLoad.row(prefix + "without a backup", round.without));
            rows.add(MeasuredLoad.row(String.format(Locale.ROOT, "%sthe first %d s from the backup's start%s", prefix, window,
                    round.seconds < window ? String.format(Locale.ROOT, " (it ran %.1f s of them)", round.seconds) : ""),
                    round.with));
            p99Without[i] = round.without.latencyAt(99).orElse(Double.NaN);
            p99With[i] = round.with.latencyAt(99).orElse(Double.NaN);
        }
        String section = measured.loadSection(before, rows);
        double medianWithout = median(p99Without);
        double medianWith = median(p99With);
        return section + String.format(Locale.ROOT, "%nMedian p99 over %d round(s): %.2f ms without a backup, %.2f ms beside "
                + "it, %.2fx.%n", done.size(), medianWithout, medianWith, medianWith / medianWithout);
    }

    /** The median of {@code values}: the middle one, or the mean of the two middle ones. */
    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    /** What is wrong with the options, or empty; checked before anything starts. */
    Optional<String> problem() {
        if (rounds < 1) {
            return Optional.of("--rounds must be at least 1, got " + rounds);
        }
        if (restoreRate != null && restoreRate < 1) {
            return Optional.of("--restore-rate must be positive, got " + restoreRate);
        }
        return measured.problem();
    }

    /** Starts a new cluster of the same size, loads the backup into it and reads a sample back. */
    private void restore(HttpClient http, Path runDir, Path backup, StringBuilder md, PrintStream err)
            throws IOException, InterruptedException {
        err.printf("starting a new cluster of %d node(s) to restore into ...%n", measured.nodes);
        try (LocalCluster target = LocalCluster.start(measured.cluster(nodeOptions, runDir.resolve("restored")),
                ClusterSecurity.none())) {
            List<String> command = new ArrayList<>(List.of(javaBinary(), "-jar", measured.jar.toAbsolutePath().toString(), "restore",
                    backup.toString(), target.coordinator().toString()));
            if (restoreRate != null) {
                command.addAll(List.of("--rate", restoreRate.toString()));
            }
            Path log = runDir.resolve("restore.txt");
            long started = System.nanoTime();
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!process.waitFor(BOUND.toMinutes(), TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IOException("the restore did not end within " + BOUND.toMinutes() + " min; see " + log);
            }
            double restoreSeconds = MeasuredLoad.secondsSince(started);
            if (process.exitValue() != 0) {
                throw new IOException("the restore exited " + process.exitValue() + "; see " + log);
            }
            int found = 0;
            for (int i = 0; i < SAMPLE; i++) {
                long key = measured.keys * i / SAMPLE;
                URI uri = target.coordinator().resolve("/v0/entity?id=key" + key);
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.discarding());
                found += r.statusCode() == 200 ? 1 : 0;
            }
            err.printf("restored in %.1f s; %d of %d sampled keys read back%n", restoreSeconds, found, SAMPLE);
            md.append("Restore into a new cluster of ").append(measured.nodes).append(" (`kvorum-node.jar restore DIR URL")
                    .append(restoreRate == null ? "" : " --rate " + restoreRate).append("`, output in restore.txt):\n\n");
            md.append("| restore | sampled keys read back |\n|---|---|\n");
            md.append(String.format(Locale.ROOT, "| %.1f s | %d of %d |%n", restoreSeconds, found, SAMPLE));
        }
    }

    private static String startBackup(HttpClient http, URI coordinator) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(coordinator.resolve("/v0/backup"))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (r.statusCode() != 202) {
            throw new IOException("POST /v0/backup answered " + r.statusCode() + ": " + r.body());
        }
        return JsonParser.parseString(r.body()).getAsJsonObject().get("id").getAsString();
    }

    /** Polls the backup's state until it is done; a failed backup, or none within the bound, is an error. */
    private static JsonObject awaitDone(HttpClient http, URI coordinator, String id) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(coordinator.resolve("/v0/backup/" + id))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (r.statusCode() == 200) {
                JsonObject state = JsonParser.parseString(r.body()).getAsJsonObject();
                String s = state.get("state").getAsString();
                if (s.equals("done")) {
                    return state;
                }
                if (s.equals("failed")) {
                    throw new IOException("backup " + id + " failed: " + r.body());
                }
            }
            Thread.sleep(POLL.toMillis()); // the poll interval of a bounded wait
        }
        throw new IOException("backup " + id + " was not done within " + BOUND.toMinutes() + " min");
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
