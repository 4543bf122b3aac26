package io.kvorum.perf.ycsb;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The facts about this machine a YCSB report needs to be read fairly: cores, CPU model, memory
 * and the JVM. Read from {@code /proc} on Linux; "unknown" elsewhere.
 */
record Machine(int cores, String cpuModel, String memory, String os, String jvm, String loadAverage) {

    static Machine current() {
        Runtime.Version v = Runtime.version();
        return new Machine(
                Runtime.getRuntime().availableProcessors(),
                procValue("/proc/cpuinfo", "model name"),
                memTotal(),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
                System.getProperty("java.vm.name") + " " + v + " (" + System.getProperty("java.vm.vendor") + ")",
                firstLine("/proc/loadavg"));
    }

    private static String memTotal() {
        String kb = procValue("/proc/meminfo", "MemTotal");
        try {
            long k = Long.parseLong(kb.replace("kB", "").trim());
            return String.format(Locale.ROOT, "%.1f GiB", k / 1024.0 / 1024.0);
        } catch (NumberFormatException e) {
            return kb;
        }
    }

    /** The value of the first {@code name : value} line of a /proc file. */
    private static String procValue(String file, String name) {
        for (String line : lines(file)) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equals(name)) {
                return line.substring(colon + 1).trim();
            }
        }
        return "unknown";
    }

    private static String firstLine(String file) {
        List<String> lines = lines(file);
        return lines.isEmpty() ? "unknown" : lines.get(0).trim();
    }

    private static List<String> lines(String file) {
        try {
            return Files.readAllLines(Path.of(file));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }
}
