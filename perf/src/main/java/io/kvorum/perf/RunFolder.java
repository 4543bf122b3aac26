package io.kvorum.perf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.stream.Stream;

/** Where a command writes: --out, or perf/runs/&lt;yyyyMMdd-HHmmss&gt;-&lt;label&gt;. */
final class RunFolder {

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT);

    private RunFolder() {}

    /**
     * Creates the folder a command writes into. One that holds files already is refused: a run
     * written over another would keep the other's flame graphs and logs beside its own report.
     *
     * @throws UsageException naming the folder, when it is a file, holds files, or cannot be created
     */
    static Path create(Path out, String label) {
        Path dir = out != null ? out
                : Path.of("perf", "runs", LocalDateTime.now().format(STAMP) + "-" + label.replaceAll("[^A-Za-z0-9._-]", "_"));
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new UsageException(dir + " is a file, not a folder for the run");
        }
        try (Stream<Path> entries = Files.isDirectory(dir) ? Files.list(dir) : Stream.empty()) {
            if (entries.findAny().isPresent()) {
                throw new UsageException(dir + " holds files already (an earlier run?): give --out a new or empty folder");
            }
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UsageException("cannot create " + dir + ": " + e, e);
        }
    }

    /** The command line as typed ({@code args} start with the subcommand), for reports. */
    static String commandLine(String[] args) {
        StringBuilder line = new StringBuilder("./kvorum perf");
        for (String arg : args) {
            line.append(' ').append(arg.matches("[A-Za-z0-9_./:=,+@%-]+") ? arg : "'" + arg.replace("'", "'\\''") + "'");
        }
        return line.toString();
    }
}
