package io.kvorum.node.util;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Small files of node state that must survive a crash whole: written, then forced to the disk. */
public final class DurableFiles {

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
}
