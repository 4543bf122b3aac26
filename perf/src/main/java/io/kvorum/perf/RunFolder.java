package io.kvorum.perf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** Where a command writes: --out, or perf/runs/&lt;yyyyMMdd-HHmmss&gt;-&lt;label&gt;. */
final class RunFolder {

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT);

    private RunFolder() {}

    static Path create(Path out, String label) throws IOException {
        Path dir = out != null ? out
                : Path.of("perf", "runs", LocalDateTime.now().format(STAMP) + "-" + label.replaceAll("[^A-Za-z0-9._-]", "_"));
        return Files.createDirectories(dir);
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
