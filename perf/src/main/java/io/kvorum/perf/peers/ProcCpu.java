package io.kvorum.perf.peers;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * CPU time of processes as Linux counts it in {@code /proc/PID/stat}: user plus system time of all
 * the process's threads, in clock ticks. Two {@link Sample}s taken around a measured window give
 * the servers' and the load generator's CPU seconds over it ({@link Window}), hence CPU per request.
 *
 * <p>Why /proc and not {@link ProcessHandle.Info#totalCpuDuration}: that reads the same numbers but
 * answers "unknown" for a process of another user, and gives no way to test the arithmetic on
 * recorded samples.
 */
public final class ProcCpu {

    /** USER_HZ on every Linux architecture this runs on; {@link #ticksPerSecond} asks getconf. */
    static final long DEFAULT_TICKS_PER_SECOND = 100;

    private ProcCpu() {}

    /**
     * User plus system time (fields 14 and 15) of one {@code /proc/PID/stat} line, in clock ticks.
     * The command name (field 2) is in parentheses and may hold spaces and parentheses itself, so
     * the fields are counted from its last closing parenthesis.
     *
     * @throws IllegalArgumentException for a line that is not of that form
     */
    public static long ticks(String statLine) {
        int close = statLine.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/PID/stat line: no (comm)");
        }
        String[] rest = statLine.substring(close + 1).trim().split("\\s+");
        // rest[0] is field 3 (state): utime, field 14, is rest[11]; stime, field 15, rest[12]
        if (rest.length < 13) {
            throw new IllegalArgumentException("not a /proc/PID/stat line: " + rest.length + " fields after (comm)");
        }
        try {
            return Long.parseLong(rest[11]) + Long.parseLong(rest[12]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a /proc/PID/stat line: utime/stime " + rest[11] + " " + rest[12], e);
        }
    }

    /** The CPU ticks of one process now. */
    static long ticksOf(Path proc, long pid) throws IOException {
        try {
            // ISO-8859-1 decodes any byte: a command name may hold bytes that are not ASCII
            return ticks(Files.readString(proc.resolve(Long.toString(pid)).resolve("stat"), StandardCharsets.ISO_8859_1));
        } catch (NoSuchFileException e) {
            throw new IOException("process " + pid + " is gone: it exited during the measurement", e);
        }
    }

    /**
     * The servers' summed ticks and the client's at one moment.
     *
     * @param serverTicks the servers' user + system ticks, summed
     * @param clientTicks the load generator's (this JVM's)
     * @param nanoTime    {@link System#nanoTime} when read
     */
    public record Sample(long serverTicks, long clientTicks, long nanoTime) {

        /** Reads {@code /proc} for the server processes and this JVM. */
        public static Sample now(List<Long> serverPids) throws IOException {
            return read(Path.of("/proc"), serverPids, ProcessHandle.current().pid());
        }

        static Sample read(Path proc, List<Long> serverPids, long clientPid) throws IOException {
            long servers = 0;
            for (long pid : serverPids) {
                servers += ticksOf(proc, pid);
            }
            return new Sample(servers, ticksOf(proc, clientPid), System.nanoTime());
        }
    }

    /**
     * CPU spent between two samples.
     *
     * @param serverSeconds the servers' CPU seconds, all nodes together
     * @param clientSeconds the load generator's CPU seconds
     * @param wallSeconds   wall-clock seconds between the samples
     */
    public record Window(double serverSeconds, double clientSeconds, double wallSeconds) {

        public static Window between(Sample before, Sample after, long ticksPerSecond) {
            if (after.serverTicks < before.serverTicks || after.clientTicks < before.clientTicks) {
                throw new IllegalArgumentException("CPU ticks went backwards: a process was replaced between the samples");
            }
            return new Window((double) (after.serverTicks - before.serverTicks) / ticksPerSecond,
                    (double) (after.clientTicks - before.clientTicks) / ticksPerSecond,
                    (after.nanoTime - before.nanoTime) / 1e9);
        }

        /** The servers' CPU time per request answered, in microseconds; NaN without requests. */
        public double serverMicrosPerRequest(long requests) {
            return requests <= 0 ? Double.NaN : serverSeconds * 1e6 / requests;
        }

        public double clientMicrosPerRequest(long requests) {
            return requests <= 0 ? Double.NaN : clientSeconds * 1e6 / requests;
        }

        /** How many cores the servers kept busy on average. */
        public double serverCores() {
            return wallSeconds <= 0 ? Double.NaN : serverSeconds / wallSeconds;
        }

        public double clientCores() {
            return wallSeconds <= 0 ? Double.NaN : clientSeconds / wallSeconds;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "servers %.2f s, client %.2f s over %.1f s", serverSeconds, clientSeconds,
                    wallSeconds);
        }
    }

    /** USER_HZ as {@code getconf CLK_TCK} says, or {@link #DEFAULT_TICKS_PER_SECOND} where it cannot be asked. */
    public static long ticksPerSecond() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            try (InputStream in = p.getInputStream()) {
                String out = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
                if (p.waitFor() == 0 && out.matches("\\d+")) {
                    return Long.parseLong(out);
                }
            }
        } catch (IOException e) {
            // no getconf: the default below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return DEFAULT_TICKS_PER_SECOND;
    }
}
