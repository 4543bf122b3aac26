package io.kvorum.node.rebuild;

import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.kvorum.node.util.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The incarnations of the members' stores as this node has seen them on their pings, kept in
 * {@value #FILE} of the data dir (docs/operations.md#replacing-a-disk): per member, the current one
 * and the one before it. A member that pings with a new incarnation had its store replaced; the
 * answer to it names the one before, so that a member asking twice (its first answer lost) reads
 * the same. Written (forced to disk) only when an incarnation changes. The senders are members (the
 * transport refuses the others); still, at most {@value #MAX_MEMBERS} are kept, and an incarnation
 * longer than {@value #MAX_LENGTH} characters is ignored, so that nothing a peer sends grows it
 * without bound.
 */
final class PeerIncarnations {

    static final String FILE = "peer-incarnations.json";
    static final int MAX_LENGTH = 64;
    static final int MAX_MEMBERS = 4096;
    private static final Logger log = LoggerFactory.getLogger(PeerIncarnations.class);

    private record Seen(String current, String previous) {
    }

    private final Path file;
    private final Map<String, Seen> seen = new HashMap<>(); // guarded by this

    PeerIncarnations(Path dataDir) {
        this.file = dataDir.resolve(FILE);
        try {
            JsonObject root = JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
            root.entrySet().forEach(e -> {
                JsonObject o = e.getValue().getAsJsonObject();
                seen.put(e.getKey(), new Seen(o.get("current").getAsString(), o.get("previous").getAsString()));
            });
        } catch (NoSuchFileException e) {
            // nothing seen yet
        } catch (IOException | JsonParseException | IllegalStateException | UnsupportedOperationException
                 | NullPointerException | ClassCastException e) {
            log.warn("{} is unreadable ({}); the members' store incarnations are learnt again from their pings", file,
                    e.getMessage());
        }
    }

    /**
     * Remembers that {@code member}'s store is {@code incarnation} (ignored when empty or too long)
     * and returns the one remembered before it, empty if none.
     */
    synchronized String seen(String member, String incarnation) {
        Seen known = seen.get(member);
        if (incarnation == null || incarnation.isEmpty() || incarnation.length() > MAX_LENGTH
                || (known == null && seen.size() >= MAX_MEMBERS)) {
            return known == null ? "" : known.current();
        }
        if (known != null && known.current().equals(incarnation)) {
            return known.previous();
        }
        String before = known == null ? "" : known.current();
        seen.put(member, new Seen(incarnation, before));
        save();
        if (!before.isEmpty()) {
            log.info("{} started on a new store (incarnation {}, was {}): it rebuilds its copies before it serves reads",
                    member, incarnation, before);
        }
        return before;
    }

    private void save() {
        JsonObject root = new JsonObject();
        seen.forEach((member, s) -> {
            JsonObject o = new JsonObject();
            o.addProperty("current", s.current());
            o.addProperty("previous", s.previous());
            root.add(member, o);
        });
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try {
            DurableFiles.writeForced(tmp, root + "\n");
            DurableFiles.replaceForced(tmp, file);
        } catch (IOException e) {
            log.warn("cannot store the members' store incarnations in {}: {}", file, e.toString());
        }
    }
}
