package io.kvorum.perf.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The CPU time the servers under test (and the whole machine) spend over one measured run.
 *
 * <p>Why: on a shared 2-core machine, throughput at saturation and tail latency move by 10% between
 * runs of the same build, so a change that saves half a microsecond per request cannot be seen in
 * them. The servers' CPU time per request at a fixed rate separates what they spend from the
 * rate, which the load tool sets. It is not free of noise either (a few percent between two runs
 * side by side here): compare medians of interleaved rounds.
 *
 * <p>A server's time is its process's and its descendants' (nginx's workers) user and system time,
 * as the JDK reads it ({@link ProcessHandle.Info#totalCpuDuration}); a descendant that exits
 * during the run takes its time with it. The machine's busy time comes from {@code /proc/stat}
 * (everything but idle and I/O wait, all cores), and is unknown elsewhere. The servers' threads
 * are read from their scheduler statistics ({@link ThreadWaits}).
 */
public final class CpuMeter {

    private static final Path PROC_STAT = Path.of("/proc/stat");

    private final Map<String, ProcessHandle> servers;
    private final Path procStat;
    private final long startNanos;
    private final Map<String, Long> serverStartNanos;
    private final MachineTicks machineStart;
    private final ThreadWaits threads;

    private CpuMeter(Map<String, ProcessHandle> servers, Path procStat) {
        this.servers = servers;
        this.procStat = procStat;
        this.machineStart = MachineTicks.read(procStat);
        this.threads = ThreadWaits.start(servers);
        this.serverStartNanos = new LinkedHashMap<>();
        servers.forEach((name, p) -> serverStartNanos.put(name, cpuNanos(p)));
        this.startNanos = System.nanoTime();
    }

    /**
     * Starts measuring the CPU time of {@code servers} (each with its descendants), by name in the
     * order given, and of this machine.
     */
    public static CpuMeter start(Map<String, ProcessHandle> servers) {
        return new CpuMeter(new LinkedHashMap<>(servers), PROC_STAT);
    }

    /** {@link #start} reading the machine's ticks from {@code procStat} (tests). */
    static CpuMeter start(Map<String, ProcessHandle> servers, Path procStat) {
        return new CpuMeter(new LinkedHashMap<>(servers), procStat);
    }

    /**
     * What was spent since {@link #start}: the servers', the machine's and the wall-clock seconds,
     * and the servers' threads' time on a core and waiting for one ({@link ThreadWaits}).
     */
    public CpuUse stop() {
        double wall = (System.nanoTime() - startNanos) / 1e9;
        Map<String, List<ThreadGroupUse>> byThreads = threads.stop();
        Map<String, Double> byServer = new LinkedHashMap<>();
        servers.forEach((name, p) -> byServer.put(name, (cpuNanos(p) - serverStartNanos.get(name)) / 1e9));
        double server = byServer.values().stream().mapToDouble(Double::doubleValue).sum();
        MachineTicks machineEnd = MachineTicks.read(procStat);
        double machine = machineStart == null || machineEnd == null ? Double.NaN
                : machineStart.busySecondsUntil(machineEnd, Runtime.getRuntime().availableProcessors(), wall);
        return new CpuUse(server, machine, wall, byServer, byThreads);
    }

    /** A process's CPU time and its descendants' (those alive now). */
    private static long cpuNanos(ProcessHandle process) {
        return Stream.concat(Stream.of(process), process.descendants())
                .mapToLong(p -> p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L))
                .sum();
    }

    /** The first line of /proc/stat: all cores' ticks, busy and in total. */
    record MachineTicks(long busy, long total) {

        static MachineTicks read(Path procStat) {
            try (Stream<String> lines = Files.lines(procStat)) {
                return lines.findFirst().map(MachineTicks::parse).orElse(null);
            } catch (IOException | RuntimeException e) {
                return null; // not Linux, or unreadable: the machine's time is unknown
            }
        }

        /** "cpu  user nice system idle iowait irq softirq steal ..." (guest time is already in user). */
        static MachineTicks parse(String line) {
            String[] f = line.trim().split("\\s+");
            if (!f[0].equals("cpu") || f.length < 6) {
                return null;
            }
            long total = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new MachineTicks(total - idle, total);
        }

        /**
         * The busy core-seconds between this reading and {@code later}: the busy share of the ticks
         * times the cores times the wall-clock time (ticks are in USER_HZ, which Java cannot read).
         */
        double busySecondsUntil(MachineTicks later, int cores, double wallSeconds) {
            long total = later.total - this.total;
            return total <= 0 ? Double.NaN : (double) (later.busy - this.busy) / total * cores * wallSeconds;
        }
    }
}
