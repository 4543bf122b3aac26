package io.kvorum.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The node image under test, {@code kvorum-node:<hash>}, built once per test JVM by
 * {@code it-tests/image/build.sh} from {@code node/target/kvorum-node.jar} (both paths come from
 * the failsafe configuration). The script caches by content hash, so this costs about a second
 * when the jar has not changed.
 */
final class NodeImage {

    private static final long BUILD_TIMEOUT_SECONDS = 300;
    private static String name;

    private NodeImage() {
    }

    /** The image name; builds the image on first use. */
    static synchronized String name() {
        if (name == null) {
            name = build();
        }
        return name;
    }

    private static String build() {
        Path script = Path.of(property("kvorum.image.script"));
        Path jar = Path.of(property("kvorum.node.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: build the node first (mvn -B -pl node -am -DskipTests package)");
        }
        long started = System.nanoTime();
        try {
            Path log = Files.createTempFile("kvorum-image-build", ".log");
            Process p = new ProcessBuilder(List.of(script.toString(), jar.toString()))
                    .redirectErrorStream(false)
                    .redirectError(log.toFile())
                    .start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(BUILD_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(script + " did not finish within " + BUILD_TIMEOUT_SECONDS + " s");
            }
            String stdout = new String(out, StandardCharsets.UTF_8).strip();
            String stderr = Files.readString(log).strip();
            Files.deleteIfExists(log);
            if (p.exitValue() != 0 || stdout.isEmpty()) {
                throw new IllegalStateException(script + " failed (exit " + p.exitValue() + "): " + stderr);
            }
            String image = stdout.substring(stdout.lastIndexOf('\n') + 1);
            System.out.printf("[kvorum-it] node image %s ready in %.1f s%n", image, (System.nanoTime() - started) / 1e9);
            return image;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while building the node image", e);
        }
    }

    private static String property(String key) {
        String value = System.getProperty(key);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("system property " + key + " is not set; run the *IT tests through Maven failsafe");
        }
        return value;
    }
}
