package io.kvorum.node.metrics;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Finds the Prometheus programs ({@code promtool}, {@code prometheus}: Debian's {@code prometheus}
 * package, which {@code ./kvorum test} installs) for the tests that run them. A missing one fails
 * the test under CI ({@code CI=true}), where it must have been installed, and skips it elsewhere,
 * saying why: a skipped test is never counted as passed there.
 */
public final class ToolsOnPath {

    private ToolsOnPath() {
    }

    /** The program's path, or the test fails (CI) or is skipped (elsewhere). */
    public static Path require(String program) {
        Optional<Path> found = find(program);
        if (found.isEmpty() && "true".equals(System.getenv("CI"))) {
            fail(program + " is not on the PATH; ./kvorum test installs it (Debian package prometheus)");
        }
        assumeTrue(found.isPresent(), program + " is not on the PATH: install Debian's prometheus package, "
                + "or run ./kvorum test, which does");
        return found.get();
    }

    private static Optional<Path> find(String program) {
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
