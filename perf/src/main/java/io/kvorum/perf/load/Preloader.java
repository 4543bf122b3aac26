package io.kvorum.perf.load;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes key0..key{KEYS-1} (the key space of the perf/wrk scripts) through the load tool itself,
 * wrk2 at a rate no node reaches ({@link #UNBOUNDED_RATE}) or closed-loop wrk, with
 * perf/wrk/preload.lua: each tool thread writes its share of the keys once and says so on stdout
 * ({@link PreloadProgress}). This reads those lines as they come, draws a progress bar, and stops
 * the tool as soon as every thread is done, since the tool itself would run for its whole -d.
 *
 * <p>Bounded: {@link #timeout} overall, and {@link #STALL_TIMEOUT} without a line from the tool
 * (a request lost to a socket error never gets an answer, so its thread never reports done).
 * Fails when any key got a non-2xx answer, saying how many and which statuses; keys are not
 * retried (the script cannot tell which key an answer belongs to).
 */
public final class Preloader {

    /** wrk2's -R: far above what the node answers, so wrk2 sends as fast as answers come back. */
    static final int UNBOUNDED_RATE = 10_000_000;
    static final int THREADS = 2;
    static final int CONNECTIONS = 64;
    static final Duration STALL_TIMEOUT = Duration.ofSeconds(60);
    private static final long REDRAW_NANOS = 200_000_000L;

    /** What a finished preload did. */
    public record Result(long keys, Duration elapsed, String command) {
        public double keysPerSecond() {
            return keys / Math.max(1e-3, elapsed.toNanos() / 1e9);
        }

        /** "200,000 keys in 7.9 s, 25,316 keys/s", for logs and reports. */
        public String summary() {
            return String.format(Locale.ROOT, "%,d keys in %.1f s, %,.0f keys/s", keys, elapsed.toNanos() / 1e9, keysPerSecond());
        }
    }

    private final LoadTool tool;
    private final Path scriptDir;
    private final PrintStream log;

    /** @param scriptDir perf/wrk, holding preload.lua; @param log where the progress bar goes */
    public Preloader(LoadTool tool, Path scriptDir, PrintStream log) {
        this.tool = tool;
        this.scriptDir = scriptDir;
        this.log = log;
    }

    /** A minute plus 2 ms a key: a floor of ~500 keys/s, far below what one node answers. */
    static Duration timeout(long keys) {
        return Duration.ofSeconds(60).plusMillis(2 * keys);
    }

    /** Tool threads: {@link #THREADS}, fewer for fewer keys, so that every thread has a key. */
    static int threads(long keys) {
        return (int) Math.min(THREADS, keys);
    }

    /** The tool's command line; it runs longer than {@link #timeout}, and this stops it. */
    List<String> command(URI target, long keys) {
        int threads = threads(keys);
        List<String> command = new ArrayList<>(List.of(tool.binary().toString(), "-t" + threads,
                "-c" + Math.max(threads, CONNECTIONS), "-d" + (timeout(keys).toSeconds() + 60) + "s"));
        if (tool.fixedRate()) {
            command.add("-R" + UNBOUNDED_RATE);
        }
        command.addAll(List.of("-s", scriptDir.resolve("preload.lua").toString(), target.toString(), "--", Integer.toString(threads)));
        return command;
    }

    static Map<String, String> environment(long keys, int valueBytes, String query) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KEYS", Long.toString(keys));
        env.put("VALUE_BYTES", Integer.toString(valueBytes));
        if (query != null && !query.isEmpty()) {
            env.put("QUERY", query);
        }
        return env;
    }

    /**
     * Writes every key; the tool's output (its own lines and each thread's done line) goes to
     * {@code outputFile}.
     *
     * @param query extra query of every PUT, e.g. "&ack=3&from=3", or "" for the node's defaults
     * @throws IOException when a key was not written (non-2xx), the tool failed, stalled or ran out
     *                     of time; the message says which and how far it got
     */
    public Result preload(URI target, long keys, int valueBytes, String query, Path outputFile)
            throws IOException, InterruptedException {
        List<String> command = command(target, keys);
        Map<String, String> env = environment(keys, valueBytes, query);
        StringBuilder shell = new StringBuilder();
        env.forEach((k, v) -> shell.append(k).append('=').append(v).append(' '));
        shell.append(String.join(" ", command));

        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(env);
        builder.environment().putAll(tool.environment());
        PreloadProgress progress = new PreloadProgress(threads(keys), keys);
        long start = System.nanoTime();
        AtomicLong lastLine = new AtomicLong(start);
        AtomicReference<String> stopReason = new AtomicReference<>();
        Process process = builder.start();
        ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "preload-watchdog");
            t.setDaemon(true);
            return t;
        });
        long deadline = start + timeout(keys).toNanos();
        watchdog.scheduleAtFixedRate(() -> {
            long now = System.nanoTime();
            if (now > deadline) {
                stopReason.compareAndSet(null, "did not finish within " + timeout(keys).toSeconds() + " s");
            } else if (now - lastLine.get() > STALL_TIMEOUT.toNanos()) {
                stopReason.compareAndSet(null, "stalled: no line from " + tool.name() + " for " + STALL_TIMEOUT.toSeconds()
                        + " s (a request lost to a socket error leaves its thread waiting for an answer)");
            }
            if (stopReason.get() != null) {
                process.destroyForcibly();
            }
        }, 1, 1, TimeUnit.SECONDS);

        boolean complete;
        long[] lastDraw = {0};
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
             BufferedWriter out = Files.newBufferedWriter(outputFile, StandardCharsets.UTF_8)) {
            complete = progress.follow(in, line -> {
                lastLine.set(System.nanoTime());
                write(out, line);
            }, () -> {
                long now = System.nanoTime();
                lastLine.set(now);
                if (now - lastDraw[0] > REDRAW_NANOS || progress.allDone()) {
                    lastDraw[0] = now;
                    log.print("\r" + progress.bar((now - start) / 1e9) + "   ");
                    log.flush();
                }
            });
        } finally {
            watchdog.shutdownNow();
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            log.println();
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        String where = String.format(Locale.ROOT, "%,d of %,d keys answered; output in %s", progress.answered(), keys, outputFile);
        if (!complete) {
            String reason = stopReason.get() != null ? stopReason.get()
                    : tool.name() + " exited with " + exitValue(process) + " before every thread was done";
            throw new IOException("preload " + reason + ": " + progress.threadsNotDone() + " thread(s) not done, " + where
                    + tail(outputFile));
        }
        if (progress.shares() != keys) {
            throw new IOException("preload.lua's threads shared " + progress.shares() + " keys, not " + keys
                    + " (is its step argument the tool's -t?)");
        }
        if (progress.written() != keys) {
            throw new IOException(String.format(Locale.ROOT, "preload failed: %,d of %,d keys not written (non-2xx answers by status: %s)",
                    keys - progress.written(), keys, progress.failedText()));
        }
        return new Result(keys, elapsed, shell.toString());
    }

    private static void write(BufferedWriter out, String line) {
        try {
            out.write(line);
            out.newLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String exitValue(Process process) {
        return process.isAlive() ? "(still running)" : Integer.toString(process.exitValue());
    }

    private static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return lines.isEmpty() ? "" : "\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }
}
