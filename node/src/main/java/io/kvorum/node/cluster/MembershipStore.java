package io.kvorum.node.cluster;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.util.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The membership a node keeps in {@value #FILE_NAME} in its data dir (docs/operations.md#growing-and-shrinking-a-cluster): the body of
 * {@code GET /v0/cluster} plus the cluster's identity. {@code --cluster} seeds it on the node's
 * first start, once the node has started; afterwards the stored copy wins, and options that
 * differ from it are logged and ignored. The file is replaced atomically (written aside, forced,
 * renamed), so a crash leaves the old membership or the new one. A file that cannot be parsed is reported and left alone: the node
 * does not start rather than guess its cluster.
 */
public final class MembershipStore {

    public static final String FILE_NAME = "membership.json";
    /** Stored only while true: the last step of a change (not part of {@code GET /v0/cluster}). */
    private static final String READS_FROM_COMING = "readsFromComing";
    /** Of the copy {@link #storeIfAbsent} writes aside before linking it into place. */
    private static final String SEED_SUFFIX = ".seed";
    private static final Logger log = LoggerFactory.getLogger(MembershipStore.class);
    private static final Gson JSON = new GsonBuilder().setPrettyPrinting().create();

    private final Path file;

    public MembershipStore(Path dataDir) {
        this.file = dataDir.resolve(FILE_NAME);
    }

    public Path file() {
        return file;
    }

    /**
     * What {@code --cluster}, {@code --cluster-name} and {@code --replication-factor} seed, and which
     * of them the operator gave: one left to its default never "differs" from the stored value.
     */
    public record Seed(Membership membership, boolean clusterGiven, boolean nameGiven, boolean replicationFactorGiven) {
    }

    /**
     * The stored membership, after logging where the options the operator gave (of {@code seed})
     * differ from it; null when none is stored yet. The caller stores the seed
     * with {@link #storeIfAbsent} once the node has started, so that a first start that fails (a
     * port in use, a typo in a host) does not fix the membership for good.
     *
     * @throws IOException                 when the file cannot be read
     * @throws InvalidTopologyException    when the file is damaged
     */
    public Membership loadComparedWith(Seed seed) throws IOException, InvalidTopologyException {
        Membership stored = load();
        if (stored != null) {
            warnWhereOptionsDiffer(stored, seed);
        }
        return stored;
    }

    /** The stored membership, or null when the file does not exist. */
    public Membership load() throws IOException, InvalidTopologyException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return null;
        }
        try {
            JsonElement parsed = JsonParser.parseString(text);
            if (!parsed.isJsonObject() || !parsed.getAsJsonObject().has("identity")) {
                throw new IllegalArgumentException("no 'identity' field");
            }
            JsonObject root = parsed.getAsJsonObject();
            ClusterView view = ClusterView.parse(text);
            return Membership.of(view, root.get("identity").getAsString(),
                    root.has(READS_FROM_COMING) && root.get(READS_FROM_COMING).getAsBoolean());
        } catch (JsonParseException | IllegalArgumentException | IllegalStateException | UnsupportedOperationException e) {
            throw new InvalidTopologyException(file + " is damaged (" + whatIsWrong(e) + "); it was left as it is: "
                    + "restore it, or move it away to seed the membership from --cluster again");
        }
    }

    /**
     * What the JSON parser found wrong, in one line: Gson's messages start with the class name of
     * the exception it wrapped and end with a line linking to its troubleshooting page.
     */
    private static String whatIsWrong(RuntimeException e) {
        Throwable deepest = e;
        while (deepest.getCause() != null && deepest.getCause().getMessage() != null) {
            deepest = deepest.getCause();
        }
        String message = String.valueOf(deepest.getMessage()).lines().findFirst().orElse("").strip();
        return message.replaceFirst("^[\\w.]+(Exception|Error): ", "")
                .replaceFirst("^Use JsonReader\\S* to accept malformed JSON", "malformed JSON");
    }

    /**
     * Deletes the copies {@link #storeIfAbsent} writes aside that a process killed while seeding
     * left behind (they are never read). Call it only while holding the data dir, as a started
     * store does: another process may be seeding through its own copy.
     */
    public void removeLeftovers() throws IOException {
        try (DirectoryStream<Path> aside = Files.newDirectoryStream(file.getParent(), FILE_NAME + "*" + SEED_SUFFIX)) {
            for (Path leftover : aside) {
                Files.deleteIfExists(leftover);
            }
        }
    }

    /** Replaces the stored membership atomically. */
    public void store(Membership m) throws IOException {
        Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
        writeForced(tmp, m);
        DurableFiles.replaceForced(tmp, file);
    }

    /**
     * Stores {@code m} unless a membership is stored already (a newer one, learned meanwhile, is
     * never replaced by the seed). Returns whether it stored it.
     */
    public boolean storeIfAbsent(Membership m) throws IOException {
        Path aside = Files.createTempFile(file.getParent(), FILE_NAME, SEED_SUFFIX);
        try {
            writeForced(aside, m);
            DurableFiles.linkForced(file, aside); // atomic, and fails if the file exists
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        } finally {
            Files.deleteIfExists(aside);
        }
    }

    /** Writes {@code m} to {@code path} and forces it to the disk, before it is renamed or linked into place. */
    private static void writeForced(Path path, Membership m) throws IOException {
        DurableFiles.writeForced(path, text(m));
    }

    private static String text(Membership m) {
        JsonObject root = JSON.toJsonTree(m.view()).getAsJsonObject();
        root.addProperty("identity", m.identity());
        if (m.readsFromComing()) {
            root.addProperty(READS_FROM_COMING, true);
        }
        return JSON.toJson(root) + "\n";
    }

    private static void warnWhereOptionsDiffer(Membership stored, Seed seed) {
        Membership options = seed.membership();
        if (seed.clusterGiven() && !stored.topology().members().equals(options.topology().members())) {
            log.warn("--cluster differs from the stored membership (epoch {}: {}); the stored membership wins",
                    stored.epoch(), stored.topology().members());
        }
        if (seed.nameGiven() && !stored.clusterName().equals(options.clusterName())) {
            log.warn("--cluster-name '{}' differs from the stored cluster name '{}'; the stored name wins",
                    options.clusterName(), stored.clusterName());
        }
        if (seed.replicationFactorGiven() && stored.replicationFactor() != options.replicationFactor()) {
            log.warn("--replication-factor {} differs from the cluster's, {}, fixed at its first start; it stays {}",
                    options.replicationFactor(), stored.replicationFactor(), stored.replicationFactor());
        }
    }
}
