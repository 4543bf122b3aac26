package io.kvorum.node;

import io.kvorum.node.util.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The node a data dir belongs to, in its file {@value #FILE_NAME}: written on the node's first
 * start, and checked on every start, so that a data dir started under another {@code --node-id}
 * (a copy-paste slip in a unit file, two volumes swapped) is refused instead of serving one node's
 * records as another's. A data dir from before the file existed is claimed by whichever node
 * starts on it next.
 */
final class DataDirOwner {

    static final String FILE_NAME = "node-id";

    private DataDirOwner() {
    }

    /** The id of the node the data dir belongs to, or null when it has none yet. */
    static String of(Path dataDir) throws IOException {
        Path file = dataDir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            return null;
        }
        String id = Files.readString(file, StandardCharsets.UTF_8).strip();
        return id.isEmpty() ? null : id; // empty: a crash between creating and filling it, before any rename
    }

    /**
     * Makes {@code nodeId} the data dir's owner if it has none: written aside, forced and renamed,
     * so that a crash leaves no owner or the whole one. The caller holds the data dir (its store is
     * open).
     */
    static void claim(Path dataDir, String nodeId) throws IOException {
        if (of(dataDir) != null) {
            return;
        }
        Path aside = dataDir.resolve(FILE_NAME + ".tmp");
        DurableFiles.writeForced(aside, nodeId + "\n");
        DurableFiles.replaceForced(aside, dataDir.resolve(FILE_NAME));
    }
}
