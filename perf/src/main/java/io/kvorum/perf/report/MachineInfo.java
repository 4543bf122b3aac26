package io.kvorum.perf.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What the report says about the machine: read from /proc, so Linux only (else "unknown"). */
public record MachineInfo(int cpus, String cpuModel, String memory, String kernel) {

    public static MachineInfo current() {
        String model = lines("/proc/cpuinfo").stream().filter(l -> l.startsWith("model name"))
                .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("unknown");
        String memory = lines("/proc/meminfo").stream().filter(l -> l.startsWith("MemTotal"))
                .map(l -> l.replaceAll("\\D+", "")).map(kb -> String.format("%.1f GiB", Long.parseLong(kb) / 1048576.0))
                .findFirst().orElse("unknown");
        String kernel = lines("/proc/version").stream().findFirst().map(l -> l.split(" ").length > 2 ? l.split(" ")[2] : l)
                .orElse(System.getProperty("os.version"));
        return new MachineInfo(Runtime.getRuntime().availableProcessors(), model, memory, kernel);
    }

    /** "/proc/loadavg"'s first three fields, e.g. "1.30 0.77 0.31". */
    public static String loadAverage() {
        return lines("/proc/loadavg").stream().findFirst().map(l -> String.join(" ", List.of(l.split(" ")).subList(0, 3)))
                .orElse("unknown");
    }

    private static List<String> lines(String file) {
        try {
            return Files.readAllLines(Path.of(file));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
