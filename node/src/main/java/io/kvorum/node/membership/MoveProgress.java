package io.kvorum.node.membership;

import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.kvorum.node.util.DurableFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How far the records of a membership change have moved, in a file of the data dir: per stream
 * (a source a joining node takes from, or the local scan a leaving node hands over) the last key
 * moved, or that it is done, for the epoch the change started in. Saved at most every
 * {@link #SAVE_EVERY_NANOS} and whenever a stream is done; a crash loses at most that much
 * progress, which the resumed scan moves again (writing a record twice changes nothing). Used by
 * one thread at a time.
 */
public final class MoveProgress {

    /** A joining node's. */
    public static final String JOIN_FILE = "join-progress.json";
    /** A leaving node's. */
    public static final String LEAVE_FILE = "leave-progress.json";
    /** A node rebuilding its copies after it lost its data. */
    public static final String REBUILD_FILE = "rebuild-progress.json";
    private static final Logger log = LoggerFactory.getLogger(MoveProgress.class);
    private static final long SAVE_EVERY_NANOS = 500_000_000L;
    private static final String DONE = "done";

    private final Path file;
    private long epoch;
    /** Per source: the base64 of the last key taken, or {@value #DONE}. */
    private final Map<String, String> sources = new HashMap<>();
    private long lastSave;

    /** @param fileName {@link #JOIN_FILE}, {@link #LEAVE_FILE} or {@link #REBUILD_FILE} */
    public MoveProgress(Path dataDir, String fileName) {
        this.file = dataDir.resolve(fileName);
    }

    /** Resumes the stored progress if it is of the change that began at {@code changeEpoch}; else starts afresh. */
    public void beginFor(long changeEpoch) {
        sources.clear();
        epoch = changeEpoch;
        try {
            JsonObject root = JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
            if (root.get("epoch").getAsLong() == changeEpoch) {
                root.getAsJsonObject("sources").entrySet().forEach(e -> sources.put(e.getKey(), e.getValue().getAsString()));
                log.info("resuming the records of the change of epoch {}: {} stream(s) under way or done", changeEpoch,
                        sources.size());
            }
        } catch (NoSuchFileException e) {
            // a new join
        } catch (IOException | JsonParseException | IllegalStateException | UnsupportedOperationException
                 | NullPointerException | ClassCastException e) {
            log.warn("{} is unreadable ({}); moving every record again", file, e.getMessage());
        }
    }

    public boolean isDone(String source) {
        return DONE.equals(sources.get(source));
    }

    /** The last key taken from {@code source}, or null to start at the first. */
    public byte[] resumeAfter(String source) {
        String s = sources.get(source);
        return s == null || DONE.equals(s) ? null : Base64.getDecoder().decode(s);
    }

    public void advance(String source, byte[] lastKey) {
        sources.put(source, Base64.getEncoder().encodeToString(lastKey));
        long now = System.nanoTime();
        if (now - lastSave > SAVE_EVERY_NANOS) {
            save();
            lastSave = now;
        }
    }

    public void markDone(String source) {
        sources.put(source, DONE);
        save();
    }

    /** The change is complete: nothing to resume. */
    public void clear() {
        sources.clear();
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void save() {
        JsonObject root = new JsonObject();
        root.addProperty("epoch", epoch);
        JsonObject s = new JsonObject();
        sources.forEach(s::addProperty);
        root.add("sources", s);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            DurableFiles.writeForced(tmp, root + "\n");
            DurableFiles.replaceForced(tmp, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
