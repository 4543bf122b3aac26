package io.kvorum.node.util;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Small files of node state that must survive a crash, and a power loss, whole: written and forced
 * to the disk, then renamed or linked into place, and the directory that holds them forced too. A
 * rename lives in the directory, not in the file: until the directory reaches the disk, a power
 * loss may bring back the old name, or no file at all.
 */
public final class DurableFiles {

    private static final Logger log = LoggerFactory.getLogger(DurableFiles.class);
    private static final LongAdder DIRECTORIES_FORCED = new LongAdder();
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private DurableFiles() {
    }

    /**
     * Writes {@code text} (UTF-8) to {@code path} and forces it to the disk, so that it can then be
     * renamed or linked into place: a crash leaves the old file or the whole new one.
     */
    public static void writeForced(Path path, String text) throws IOException {
        Files.writeString(path, text, StandardCharsets.UTF_8);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
            channel.force(true);
        }
    }

    /** Renames {@code source} over {@code target} atomically, and forces their directory. */
    public static void replaceForced(Path source, Path target) throws IOException {
        Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectoryOf(target);
    }

    /**
     * Links {@code existing} as {@code link}, which must not exist (atomic), and forces their directory.
     *
     * @throws java.nio.file.FileAlreadyExistsException when {@code link} exists
     */
    public static void linkForced(Path link, Path existing) throws IOException {
        Files.createLink(link, existing);
        forceDirectoryOf(link);
    }

    /**
     * Forces the directory that holds {@code file}: its entries (names) reach the disk. A file system
     * that cannot force a directory (some network and FUSE ones) gets one warning, and the rename
     * stands as it is: it has happened already, and failing now would only stop the node's work.
     */
    public static void forceDirectoryOf(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
            directory.force(true);
            DIRECTORIES_FORCED.increment();
        } catch (IOException e) {
            if (WARNED.compareAndSet(false, true)) {
                log.warn("cannot force directory {} to the disk ({}); renames of state files there may not survive a "
                        + "power loss", dir, e.getClass().getSimpleName());
            }
        }
    }

    /** How many times a directory was forced since the process started (tests). */
    public static long directoriesForced() {
        return DIRECTORIES_FORCED.sum();
    }
}
