package io.kvorum.node.rebuild;

import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.kvorum.node.liveness.Incarnations;
import io.kvorum.node.util.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this node's store holds what the cluster expects of it (docs/operations.md#replacing-a-disk).
 * Each store has an incarnation, a random id created with it and kept in {@value #FILE} with this
 * node's {@link State}; its pings carry it, and each peer answers with the incarnation it
 * remembered for this node before ({@link PeerIncarnations}).
 *
 * <p>A node that starts on an empty store in a cluster of more than one member is
 * {@link State#CHECKING} until its peers tell: a peer that remembers another incarnation makes it
 * {@link State#REBUILDING} (the cluster knew it as a member holding data); once every peer has
 * answered or failed to, and at least one answered without remembering any, it is a new member
 * and {@link State#SERVING}. With no peer answering it keeps checking: a peer that remembers it
 * may be among those down. A node still checking at a restart takes a new incarnation (a peer may
 * have remembered the previous one already), so that it can only err towards rebuilding.
 * {@link State#REBUILDING} lasts until {@link #rebuilt}, across restarts. While checking or
 * rebuilding, this node's replica refuses reads ({@link #refuseReads}); it stores writes as ever.
 *
 * <p>Thread-safe: pings are answered and their answers read on the transport's threads.
 */
public final class Rebuild implements Incarnations {

    static final String FILE = "incarnation.json";
    private static final Logger log = LoggerFactory.getLogger(Rebuild.class);

    /** This node's store as the cluster sees it. */
    public enum State {
        /** Started on an empty store; does not know yet whether the cluster knew it with data. */
        CHECKING,
        /** Lost the data the cluster knew it with: takes its keys' records from the other replicas. */
        REBUILDING,
        /** Holds its copies (or is new): serves reads. */
        SERVING
    }

    /** Told when this node starts rebuilding (at once when it starts so), on the deciding thread. */
    public interface Listener {
        void rebuilding();
    }

    private final String nodeId;
    private final Path file;
    private final PeerIncarnations peers;
    private final Supplier<Set<String>> peerIds;
    private final String incarnation;
    private volatile State state;
    private volatile Listener listener = () -> { };
    private final Set<String> answeredUnknown = new HashSet<>(); // guarded by this
    private final Set<String> unanswered = new HashSet<>(); // guarded by this

    private Rebuild(String nodeId, Path dataDir, String incarnation, State state, Supplier<Set<String>> peerIds) {
        this.nodeId = nodeId;
        this.file = dataDir.resolve(FILE);
        this.peers = new PeerIncarnations(dataDir);
        this.incarnation = incarnation;
        this.state = state;
        this.peerIds = peerIds;
    }

    /**
     * Reads or creates this node's incarnation, before any peer is pinged.
     *
     * @param storeEmpty whether the store holds no record (a new data dir, or a wiped one)
     * @param mayRebuild false for a node that needs no check: alone in its cluster, or joining (the
     *                   join takes its records anyway)
     * @param peerIds    the other members now
     */
    public static Rebuild open(String nodeId, Path dataDir, boolean storeEmpty, boolean mayRebuild,
                               Supplier<Set<String>> peerIds) throws IOException {
        Path file = dataDir.resolve(FILE);
        String incarnation = null;
        State state = null;
        try {
            JsonObject root = JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
            incarnation = root.get("incarnation").getAsString();
            state = State.valueOf(root.get("state").getAsString());
        } catch (NoSuchFileException e) {
            // a new store, or one of a version before incarnations
        } catch (JsonParseException | IllegalStateException | IllegalArgumentException | UnsupportedOperationException
                 | NullPointerException | ClassCastException e) {
            log.warn("{} is unreadable ({}); taking a new store incarnation", file, e.getMessage());
            incarnation = null;
            state = storeEmpty ? null : State.SERVING;
        }
        if (storeEmpty && state != State.REBUILDING) {
            // a new or wiped store; a restart while checking too: a peer may remember the id it had
            state = mayRebuild ? State.CHECKING : State.SERVING;
            incarnation = null;
        } else if (state == null) {
            state = State.SERVING; // records from before incarnations: they are this node's
        }
        if (incarnation == null) {
            incarnation = UUID.randomUUID().toString();
        }
        Rebuild r = new Rebuild(nodeId, dataDir, incarnation, state, peerIds);
        r.save(state);
        if (state == State.CHECKING) {
            log.info("{} starts on an empty store (incarnation {}): it answers no read as a replica until a peer has "
                    + "told whether the cluster knew it with data", nodeId, incarnation);
        } else if (state == State.REBUILDING) {
            log.info("{} resumes rebuilding its copies from the other replicas; it answers no read as a replica until "
                    + "done", nodeId);
        }
        return r;
    }

    /** Whether the data dir keeps an incarnation already. */
    public static boolean kept(Path dataDir) {
        return Files.exists(dataDir.resolve(FILE));
    }

    /** Starts telling {@code l}; tells it at once if this node is rebuilding already. */
    public void listen(Listener l) {
        listener = l;
        if (state == State.REBUILDING) {
            l.rebuilding();
        }
    }

    public State state() {
        return state;
    }

    /** Whether this node's replica refuses reads now: checking or rebuilding. */
    public boolean refuseReads() {
        return state != State.SERVING;
    }

    /** Why reads are refused, for the peer or the coordinator. */
    public RebuildingException refusal() {
        return new RebuildingException(nodeId + (state == State.CHECKING
                ? " started on an empty store and does not know yet whether it must rebuild it"
                : " is rebuilding its copies after it lost its data") + "; it answers no read as a replica until done");
    }

    /** Every record of this node's keys has been taken from the other replicas: reads are served. */
    public synchronized void rebuilt() throws IOException {
        save(State.SERVING);
        state = State.SERVING;
        log.info("{} has rebuilt its copies from the other replicas and serves reads", nodeId);
    }

    @Override
    public String own() {
        return incarnation;
    }

    @Override
    public String seen(String member, String memberIncarnation) {
        return peers.seen(member, memberIncarnation);
    }

    @Override
    public void answered(String peer, String remembered) {
        if (state != State.CHECKING) {
            return;
        }
        boolean rebuild;
        synchronized (this) {
            if (state != State.CHECKING) {
                return;
            }
            rebuild = remembered != null && !remembered.isEmpty() && !remembered.equals(incarnation);
            if (rebuild) {
                try {
                    save(State.REBUILDING);
                } catch (IOException e) {
                    log.warn("cannot record in {} that this node rebuilds: {}; it keeps refusing reads", file, e.toString());
                    return;
                }
                state = State.REBUILDING;
                log.info("{} remembers {}'s store as incarnation {}: {} lost its data and rebuilds its copies from the "
                        + "other replicas before it serves reads", peer, nodeId, remembered, nodeId);
            } else {
                answeredUnknown.add(peer);
                unanswered.remove(peer);
                decideIfAllTold();
                return;
            }
        }
        listener.rebuilding();
    }

    @Override
    public synchronized void unanswered(String peer) {
        if (state == State.CHECKING && !answeredUnknown.contains(peer)) {
            unanswered.add(peer);
            decideIfAllTold();
        }
    }

    /** Under the lock: a new member once every peer answered or failed to, and one at least answered. */
    private void decideIfAllTold() {
        Set<String> all = peerIds.get();
        if (answeredUnknown.isEmpty() || !all.stream().allMatch(p -> answeredUnknown.contains(p) || unanswered.contains(p))) {
            return;
        }
        try {
            save(State.SERVING);
        } catch (IOException e) {
            log.warn("cannot record in {} that this node is new: {}; it keeps refusing reads", file, e.toString());
            return;
        }
        state = State.SERVING;
        log.info("{} is a new member (no peer of {} that answered remembers an earlier store of it): it serves reads",
                nodeId, answeredUnknown);
    }

    private void save(State s) throws IOException {
        JsonObject root = new JsonObject();
        root.addProperty("incarnation", incarnation);
        root.addProperty("state", s.name());
        Path tmp = file.resolveSibling(FILE + ".tmp");
        DurableFiles.writeForced(tmp, root + "\n");
        DurableFiles.replaceForced(tmp, file);
    }
}
