package io.kvorum.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for a secured cluster (docs/operations.md#security), made the way docs/deployment.md tells operators to:
 * {@code ./kvorum certs DIR ID...} (openssl), so that whoever uses this also checks that command.
 */
public final class KvorumCerts {

    private KvorumCerts() {
    }

    /**
     * Runs the repository's {@code ./kvorum certs dir ids...}: {@code dir/ca.pem} and {@code dir/ca.key},
     * and {@code dir/ID.pem} + {@code dir/ID.key} per id.
     *
     * @throws IOException when the script is not found above the working directory, or fails
     */
    public static Path make(Path dir, String... ids) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(script().toString(), "certs", dir.toString()));
        command.addAll(List.of(ids));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output;
        try (InputStream in = p.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("./kvorum certs did not end within 60 s");
        }
        if (p.exitValue() != 0) {
            throw new IOException("./kvorum certs failed: " + output.trim());
        }
        return dir;
    }

    /** The repository's {@code kvorum} script: in the working directory or a parent of it. */
    public static Path script() throws IOException {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path script = dir.resolve("kvorum");
            if (Files.isRegularFile(script) && Files.isDirectory(dir.resolve("node"))) {
                return script;
            }
        }
        throw new IOException("no ./kvorum in " + Path.of("").toAbsolutePath() + " or above");
    }
}
