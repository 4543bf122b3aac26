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
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
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
 * times {@code POST /v0/backup} until every member's part is {@code done}. With {@code --rate}, a
 * wrk2 load on n1 is measured for {@code --load-duration} without a backup, then for as long again
 * from the backup's start. Then a new cluster of the same size is started and the backup is
 * loaded into it with {@code kvorum-node.jar restore}, timed, and a sample of keys is read back.
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
        String id;
        err.printf("starting %d node(s) from %s ...%n", measured.nodes, measured.jar);
        try (LocalCluster cluster = LocalCluster.start(measured.cluster(options, runDir.resolve("original")),
                ClusterSecurity.none())) {
            MeasuredLoad.Before before = measured.measureBefore(cluster, runDir, "without a backup", err);
            md = MeasuredLoad.reportHead("Kvorum perf backup", spec, loadBefore, before.preload());
            CompletableFuture<WrkOutput> with = measured.startBeside(before, runDir, "backup-load");
            long started = System.nanoTime();
            id = startBackup(http, cluster.coordinator());
            err.printf("backup %s started; waiting until every member's part is done ...%n", id);
            JsonObject done = awaitDone(http, cluster.coordinator(), id);
            double backupSeconds = MeasuredLoad.secondsSince(started);
            long records = 0;
            long bytes = 0;
            for (var member : done.getAsJsonObject("members").entrySet()) {
                records += member.getValue().getAsJsonObject().get("records").getAsLong();
                bytes += member.getValue().getAsJsonObject().get("bytes").getAsLong();
            }
            err.printf("backup %s done after %.1f s: %,d records, %,d bytes%n", id, backupSeconds, records, bytes);
            md.append("| cluster | backup | records (every member's) | bytes | records/s |\n|---|---|---|---|---|\n");
            md.append(String.format(Locale.ROOT, "| %d members, %,d keys of %d bytes (RF %d) | %.1f s | %,d | %,d | %,.0f |%n%n",
                    measured.nodes, measured.keys, measured.valueBytes, measured.nodes, backupSeconds, records, bytes,
                    records / backupSeconds));
            if (with != null) {
                long window = measured.loadDuration.toSeconds();
                md.append(measured.loadSection(before, "without a backup", with.get(), String.format(Locale.ROOT,
                        "the first %d s from the backup's start%s", window, backupSeconds < window
                                ? String.format(Locale.ROOT, " (it ran %.1f s of them)", backupSeconds) : ""))).append('\n');
            }
        }
        restore(http, runDir, backups.resolve(id), md, err);
        Files.writeString(runDir.resolve("backup.md"), md.toString(), StandardCharsets.UTF_8);
        if (!keepBackup) {
            deleteRecursively(backups);
        }
        err.println("report: " + runDir.resolve("backup.md"));
        return 0;
    }

    /** What is wrong with the options, or empty; checked before anything starts. */
    Optional<String> problem() {
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
