package io.kvorum.node.storage;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps leveldbjni's native library in one file in the node's data dir and makes leveldbjni load
 * it from there.
 *
 * <p>Left alone, leveldbjni's loader (hawtjni) copies the library out of the jar into
 * {@code java.io.tmpdir} under a new random name on every start, and deletes the copy only when
 * the JVM exits normally. A node never does: after its graceful shutdown it halts
 * ({@code ShutdownSignals}), or it is killed. So every start of a node left 735 KB in {@code /tmp}
 * for good.
 *
 * <p>hawtjni looks first in the directory named by the system property
 * {@value #PATH_PROPERTY}, for a file named as {@link System#mapLibraryName} names the library.
 * {@link #installIn} puts the jar's copy there (once: a later start finds the same bytes and
 * keeps them), loads it, and sets the property. It must run before anything touches LevelDB in
 * this JVM, so {@code Main} calls it before it starts the node. Where it cannot (not Linux, or a
 * data dir mounted {@code noexec}), it says why and leaves hawtjni to its own way.
 */
public final class LevelDbNativeLibrary {

    private static final Logger log = LoggerFactory.getLogger(LevelDbNativeLibrary.class);
    static final String PATH_PROPERTY = "library.leveldbjni.path";
    private static final String NAME = "leveldbjni";

    private LevelDbNativeLibrary() {
    }

    /**
     * Places the library in {@code dir} (creating it), loads it from there and points leveldbjni
     * at it. Returns whether it did; if not, leveldbjni extracts its own temporary copy as before.
     */
    public static boolean installIn(Path dir) {
        String fileName = System.mapLibraryName(NAME);
        String resource = resourcePath(fileName);
        byte[] library;
        try (InputStream in = resource == null ? null : LevelDbNativeLibrary.class.getClassLoader()
                .getResourceAsStream(resource)) {
            if (in == null) {
                log.debug("no {} for this platform in the jar; leveldbjni finds its library itself", fileName);
                return false;
            }
            library = in.readAllBytes();
        } catch (IOException e) {
            log.warn("cannot read {} from the jar ({}); leveldbjni extracts its own copy to {}",
                    resource, e.getMessage(), System.getProperty("java.io.tmpdir"));
            return false;
        }
        Path target = dir.resolve(fileName).toAbsolutePath();
        try {
            place(library, target);
        } catch (IOException e) {
            // An unusable data dir: the node's start says so, in its one-line message.
            log.debug("cannot place LevelDB's native library in {}", dir, e);
            return false;
        }
        try {
            System.load(target.toString());
        } catch (UnsatisfiedLinkError e) {
            log.warn("cannot use {} for LevelDB's native library ({}); leveldbjni extracts its own copy to {}, "
                    + "left there after every stop", target, e.getMessage(), System.getProperty("java.io.tmpdir"));
            return false;
        }
        System.setProperty(PATH_PROPERTY, target.getParent().toString());
        return true;
    }

    /** The library's path in the jar for this platform (hawtjni's layout), or null if not Linux. */
    private static String resourcePath(String fileName) {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String bits = System.getProperty("sun.arch.data.model", "");
        if (!os.startsWith("linux") || !(bits.equals("64") || bits.equals("32"))) {
            return null;
        }
        return "META-INF/native/linux" + bits + "/" + fileName;
    }

    /** Writes {@code library} to {@code target} unless it holds those bytes already; never leaves a partial file there. */
    private static void place(byte[] library, Path target) throws IOException {
        if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), library)) {
            return;
        }
        Files.createDirectories(target.getParent());
        Path partial = Files.createTempFile(target.getParent(), NAME, ".partial");
        try {
            Files.write(partial, library);
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(partial);
        }
    }
}
