package io.kvorum.node.admin;

import com.google.gson.Gson;
import com.google.gson.JsonParseException;
import io.kvorum.client.TrustedCa;
import io.kvorum.node.backup.BackupFileWriter;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.model.Entry;
import io.kvorum.node.util.Pace;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * {@code java -jar kvorum-node.jar restore DIR URL} ({@code ./kvorum restore DIR}): loads a backup
 * into the running cluster URL belongs to (docs/operations.md#restore).
 *
 * <p>First it checks every file of every member folder of DIR against its manifest
 * ({@link BackupManifest#verify}); a missing or damaged one exits {@value #EXIT_BAD} with one line
 * on stderr naming it, before anything is sent. Then it merges the member folders in key order,
 * each key once with its newest version ({@link MergedRecords}), and sends them in batches to
 * {@code POST /v0/restore}, paced to {@code --rate} keys a second, retrying a batch the node answers
 * 503 or 504 (restoring a record again changes nothing). The last key of each batch the cluster took
 * is recorded in {@value #PROGRESS_FILE} in DIR, and a rerun skips the keys up to it; the file is
 * deleted once the whole backup was loaded. Progress goes to stderr, a bar on a terminal; the last
 * line on stdout is the number of keys it loaded. Exit {@value #EXIT_OK} when every record was loaded, {@value #EXIT_FAILED}
 * when the cluster refused or could not take them.
 */
public final class RestoreCommand {

    public static final String NAME = "restore";
    static final String USAGE = "usage: kvorum-node.jar restore DIR URL [--auth-token-file FILE] [--tls-ca FILE] "
            + "[--rate RECORDS_PER_SECOND] (DIR holds one folder per member, each with its manifest.json)";
    static final int EXIT_OK = 0;
    static final int EXIT_FAILED = 1;
    static final int EXIT_BAD = 2;
    static final String PROGRESS_FILE = "restore-progress";
    /** The start of a progress file's line naming the last key of a batch the cluster took. */
    static final String THROUGH = "through ";
    static final int DEFAULT_RATE = 5000;
    /** A batch is sent once it holds this many records, or {@link #BATCH_BYTES}. */
    static final int BATCH_RECORDS = 500;
    /** Under the default {@code --max-value-bytes} (4 MiB), which bounds a node's request bodies. */
    static final int BATCH_BYTES = 1 << 20;
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** How long a batch the cluster cannot take (503, 504, no connection) is retried. */
    static final Duration RETRY_FOR = Duration.ofMinutes(5);
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);
    private static final Gson JSON = new Gson();

    private RestoreCommand() {
    }

    /** What the command line asks for. */
    record Options(Path dir, URI url, Path tokenFile, Path ca, double rate) {
    }

    /** Why the command stops, with its exit status and the one line for stderr. */
    static final class Stop extends Exception {
        final int exit;

        Stop(int exit, String message) {
            super(message, null, false, false);
            this.exit = exit;
        }
    }

    public static int run(List<String> args, PrintStream out, PrintStream err) {
        return run(args, out, err, System.console() != null, System::nanoTime);
    }

    /**
     * @param terminal whether stderr is a terminal: a progress bar redrawn in place, else a line every few seconds
     * @param nanoTime the clock of the progress lines
     */
    static int run(List<String> args, PrintStream out, PrintStream err, boolean terminal, LongSupplier nanoTime) {
        if (args.equals(List.of("--help")) || args.equals(List.of("-h"))) {
            out.println(USAGE);
            return EXIT_OK;
        }
        try {
            Options options = parse(args);
            List<Member> members = verify(options.dir);
            long loaded = new Load(options, members, err, terminal, nanoTime).run();
            out.println(loaded);
            return EXIT_OK;
        } catch (Stop e) {
            err.println("kvorum restore: " + e.getMessage());
            return e.exit;
        }
    }

    static Options parse(List<String> args) throws Stop {
        List<String> positional = new ArrayList<>();
        Path tokenFile = null;
        Path ca = null;
        double rate = DEFAULT_RATE;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            String name = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            if (!a.startsWith("--")) {
                positional.add(a);
                continue;
            }
            String value = a.contains("=") ? a.substring(a.indexOf('=') + 1) : i + 1 < args.size() ? args.get(++i) : null;
            if (value == null || value.isEmpty()) {
                throw new Stop(EXIT_BAD, name + " needs a value; " + USAGE);
            }
            switch (name) {
                case "--auth-token-file" -> tokenFile = Path.of(value);
                case "--tls-ca" -> ca = Path.of(value);
                case "--rate" -> {
                    try {
                        rate = Double.parseDouble(value);
                    } catch (NumberFormatException e) {
                        rate = -1;
                    }
                    if (!(rate > 0) || Double.isInfinite(rate)) {
                        throw new Stop(EXIT_BAD, "--rate must be a positive number of records a second, got '" + value + "'");
                    }
                }
                default -> throw new Stop(EXIT_BAD, "unknown option " + name + "; " + USAGE);
            }
        }
        if (positional.size() != 2) {
            throw new Stop(EXIT_BAD, USAGE);
        }
        Path dir = Path.of(positional.get(0));
        if (!Files.isDirectory(dir)) {
            throw new Stop(EXIT_BAD, dir + " is not a directory; " + USAGE);
        }
        URI url;
        try {
            url = URI.create(positional.get(1));
            if (url.getHost() == null || !(url.getScheme().equals("http") || url.getScheme().equals("https"))
                    || url.getPort() > 65535) {
                throw new IllegalArgumentException("not an http URL");
            }
        } catch (IllegalArgumentException e) {
            throw new Stop(EXIT_BAD, positional.get(1) + " is not a node's URL such as " + StatusCommand.DEFAULT_URL);
        }
        return new Options(dir, url, tokenFile, ca, rate);
    }

    /** One member folder of the backup, its manifest read and its files verified. */
    record Member(Path dir, BackupManifest manifest) {
        String name() {
            return dir.getFileName().toString();
        }
    }

    /**
     * Every member folder of {@code dir}, its files checked against its manifest.
     *
     * @throws Stop ({@value #EXIT_BAD}) naming the first manifest or file missing or damaged
     */
    static List<Member> verify(Path dir) throws Stop {
        List<Path> folders;
        try (Stream<Path> list = Files.list(dir)) {
            folders = list.filter(Files::isDirectory).sorted().toList();
        } catch (IOException e) {
            throw new Stop(EXIT_BAD, "cannot list " + dir + ": " + e.getMessage());
        }
        if (folders.isEmpty()) {
            throw new Stop(EXIT_BAD, dir + " holds no member folder (give the backup's folder, which holds one per member)");
        }
        List<Member> members = new ArrayList<>();
        for (Path folder : folders) {
            try {
                BackupManifest manifest = BackupManifest.verify(folder);
                members.add(new Member(folder, manifest));
            } catch (IOException e) {
                throw new Stop(EXIT_BAD, e.getMessage());
            }
        }
        return members;
    }

    /** One run of the loading: the HTTP client, the progress file and the progress shown. */
    private static final class Load {
        private final Options options;
        private final List<Member> members;
        private final PrintStream err;
        private final boolean terminal;
        private final LongSupplier nanoTime;
        private final HttpClient http;
        private final String token;
        private final URI intake;
        private final Pace pace;
        private final Path progressFile;
        private final long total;
        private long done;
        private long loaded;
        private long lastShown;
        private String current = "";

        Load(Options options, List<Member> members, PrintStream err, boolean terminal, LongSupplier nanoTime) throws Stop {
            this.options = options;
            this.members = members;
            this.err = err;
            this.terminal = terminal;
            this.nanoTime = nanoTime;
            this.token = options.tokenFile == null ? null : adminToken(options.tokenFile);
            this.http = client(options.ca);
            this.intake = options.url.resolve("/v0/restore");
            this.pace = Pace.steady(options.rate);
            this.progressFile = options.dir.resolve(PROGRESS_FILE);
            this.total = members.stream().mapToLong(m -> m.manifest().records()).sum();
            this.lastShown = nanoTime.getAsLong();
        }

        long run() throws Stop {
            String cluster = clusterName();
            byte[] resumeAfter = loadedThrough(cluster);
            long skipped = 0;
            Batch batch = new Batch();
            try (MergedRecords records = new MergedRecords(members)) {
                for (Entry e = records.next(); e != null; e = records.next()) {
                    done = records.read();
                    current = records.position();
                    if (resumeAfter != null && Arrays.compareUnsigned(e.key(), resumeAfter) <= 0) {
                        skipped++;
                        continue;
                    }
                    batch.add(e);
                    if (batch.count >= BATCH_RECORDS || batch.bytes.size() >= BATCH_BYTES) {
                        send(batch);
                        batch = new Batch();
                    }
                }
                done = records.read();
            } catch (IOException e) {
                throw new Stop(EXIT_FAILED, e.getMessage());
            }
            if (batch.count > 0) {
                send(batch);
            }
            if (terminal) {
                err.println();
            }
            err.printf(Locale.ROOT, "kvorum restore: loaded %d key(s) from %d record(s) of %d member folder(s)%s%n", loaded,
                    total, members.size(), skipped > 0 ? " (" + skipped + " key(s) an earlier run loaded skipped)" : "");
            try {
                Files.deleteIfExists(progressFile);
            } catch (IOException e) {
                err.println("kvorum restore: could not delete " + progressFile + ": " + e.getMessage());
            }
            return loaded;
        }

        /**
         * Sends a batch, retrying it while the cluster answers 503 or 504 or cannot be reached;
         * once it is taken, records its last key in the progress file.
         */
        private void send(Batch batch) throws Stop {
            pace.acquire(batch.count);
            byte[] body = batch.finish();
            long giveUp = nanoTime.getAsLong() + RETRY_FOR.toNanos();
            long backoffMillis = 100;
            while (true) {
                String failure;
                try {
                    HttpRequest.Builder request = HttpRequest.newBuilder(intake).timeout(TIMEOUT)
                            .header("Content-Type", "application/octet-stream")
                            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
                    if (token != null) {
                        request.header("Authorization", "Bearer " + token);
                    }
                    HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                    int status = answer.statusCode();
                    if (status == 200) {
                        loaded += batch.count;
                        recordLoadedThrough(batch.lastKey);
                        showProgress();
                        return;
                    }
                    failure = intake + " answered " + status + ": " + firstLine(answer.body());
                    if (status != 503 && status != 504) {
                        throw new Stop(EXIT_FAILED, failure + (status == 413 ? " (a batch at " + current + " is larger "
                                + "than the node's --max-value-bytes; raise it on the cluster to restore this backup)" : ""));
                    }
                } catch (IOException e) {
                    failure = "cannot reach " + intake + ": " + e;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new Stop(EXIT_FAILED, "interrupted");
                }
                if (nanoTime.getAsLong() - giveUp > 0) {
                    throw new Stop(EXIT_FAILED, failure + "; gave up after " + RETRY_FOR.toMinutes()
                            + " min of retries (rerun to go on from the last finished file)");
                }
                sleep(backoffMillis);
                backoffMillis = Math.min(5000, backoffMillis * 2);
            }
        }

        private void showProgress() {
            long now = nanoTime.getAsLong();
            if (terminal) {
                int width = 30;
                int filled = total == 0 ? width : (int) (width * Math.min(done, total) / total);
                err.printf(Locale.ROOT, "\r[%s%s] %3d%% %d/%d records  %s ", "#".repeat(filled), ".".repeat(width - filled),
                        total == 0 ? 100 : done * 100 / total, done, total, current);
                err.flush();
            } else if (now - lastShown >= PROGRESS_EVERY.toNanos()) {
                lastShown = now;
                err.printf(Locale.ROOT, "kvorum restore: %d of %d records (%d%%), at %s%n", done, total,
                        total == 0 ? 100 : done * 100 / total, current);
            }
        }

        /** The name of the cluster URL belongs to, which the progress file is kept for. */
        private String clusterName() throws Stop {
            URI uri = options.url.resolve("/v0/cluster");
            try {
                HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(StatusCommand.TIMEOUT);
                if (token != null) {
                    request.header("Authorization", "Bearer " + token);
                }
                HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() != 200) {
                    throw new Stop(EXIT_FAILED, uri + " answered " + answer.statusCode() + ": " + firstLine(answer.body()));
                }
                ClusterName view = JSON.fromJson(answer.body(), ClusterName.class);
                if (view == null || view.name == null) {
                    throw new Stop(EXIT_FAILED, uri + " did not answer a Kvorum membership");
                }
                return view.name;
            } catch (JsonParseException e) {
                throw new Stop(EXIT_FAILED, uri + " did not answer a Kvorum membership");
            } catch (IOException e) {
                throw new Stop(EXIT_FAILED, "cannot reach " + uri + ": " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Stop(EXIT_FAILED, "interrupted");
            }
        }

        private record ClusterName(String name) {
        }

        /**
         * The last key an earlier, unfinished run into the same cluster loaded, or null: the
         * progress file's first line names the cluster, each further line is {@value #THROUGH}
         * and the hexadecimal last key of a batch the cluster took. A file kept for another cluster
         * is started over.
         */
        private byte[] loadedThrough(String cluster) throws Stop {
            String header = "cluster " + cluster;
            try {
                if (Files.exists(progressFile)) {
                    List<String> lines = Files.readAllLines(progressFile, StandardCharsets.UTF_8);
                    if (!lines.isEmpty() && lines.get(0).equals(header)) {
                        String last = lines.get(lines.size() - 1);
                        if (last.startsWith(THROUGH)) {
                            err.println("kvorum restore: " + progressFile + " says an earlier run loaded every key up to "
                                    + "one into " + cluster + "; skipping those keys");
                            return HexFormat.of().parseHex(last.substring(THROUGH.length()));
                        }
                        return null;
                    }
                    err.println("kvorum restore: " + progressFile + " is from a restore into another cluster; starting over");
                }
                Files.writeString(progressFile, header + "\n", StandardCharsets.UTF_8);
                return null;
            } catch (IOException | IllegalArgumentException e) {
                throw new Stop(EXIT_FAILED, "cannot use the progress file " + progressFile + ": " + e.getMessage()
                        + " (delete it to load everything again)");
            }
        }

        private void recordLoadedThrough(byte[] key) throws Stop {
            try {
                Files.writeString(progressFile, THROUGH + HexFormat.of().formatHex(key) + "\n", StandardCharsets.UTF_8,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new Stop(EXIT_FAILED, "cannot write the progress file " + progressFile + ": " + e.getMessage());
            }
        }

        private static void sleep(long millis) throws Stop {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Stop(EXIT_FAILED, "interrupted");
            }
        }

        /**
         * The token to send: the first line's of the file whose role is {@code admin} (or none,
         * which means admin), in the format of a node's {@code --auth-token-file}.
         */
        private static String adminToken(Path file) throws Stop {
            try {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    String[] fields = line.strip().replace("\uFEFF", "").split("\\s+");
                    if (fields[0].isEmpty() || fields[0].startsWith("#")) {
                        continue;
                    }
                    if (fields.length == 1 || fields[1].equals("admin")) {
                        return fields[0];
                    }
                }
            } catch (IOException e) {
                throw new Stop(EXIT_BAD, "cannot read the token file " + file + ": " + e.getMessage());
            }
            throw new Stop(EXIT_BAD, file + " holds no admin token (a line TOKEN or TOKEN admin)");
        }

        private static HttpClient client(Path ca) throws Stop {
            HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(StatusCommand.TIMEOUT);
            if (ca == null) {
                return builder.build();
            }
            try {
                return builder.sslContext(TrustedCa.clientContext(ca)).build();
            } catch (IOException | GeneralSecurityException e) {
                throw new Stop(EXIT_BAD, "cannot use the CA file " + ca + ": " + e.getMessage());
            }
        }

        private static String firstLine(String body) {
            String first = body == null ? "" : body.strip().lines().findFirst().orElse("");
            return first.length() > 300 ? first.substring(0, 300) + "..." : first;
        }
    }

    /** Records encoded for {@code POST /v0/restore}: a data file's content, uncompressed. */
    private static final class Batch {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final DataOutputStream data = new DataOutputStream(bytes);
        int count;

        Batch() {
            try {
                BackupFileWriter.writeMagic(data);
            } catch (IOException e) {
                throw new IllegalStateException("a byte array takes every write", e);
            }
        }

        byte[] lastKey;

        void add(Entry e) {
            try {
                BackupFileWriter.writeEntry(data, e.key(), e.record());
            } catch (IOException x) {
                throw new IllegalStateException("a byte array takes every write", x);
            }
            lastKey = e.key();
            count++;
        }

        byte[] finish() {
            try {
                BackupFileWriter.writeEnd(data, count);
            } catch (IOException e) {
                throw new IllegalStateException("a byte array takes every write", e);
            }
            return bytes.toByteArray();
        }
    }
}
