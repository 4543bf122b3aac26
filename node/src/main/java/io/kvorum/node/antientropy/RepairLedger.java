package io.kvorum.node.antientropy;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.storage.BucketIndex;
import io.kvorum.node.storage.ReplicaHoldings;
import io.kvorum.node.util.DurableFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What each peer is known to hold, from the anti-entropy rounds this node completed with it: the
 * {@link ReplicaHoldings} that the expiry purger asks before it drops a tombstone
 * (docs/operations.md#tombstones-and-repair).
 *
 * <p>What a round proves: a round this node started at hybrid time {@code S} with a peer, and that
 * completed (both sides applied everything), compared trees built after {@code S}; every record of
 * the pair's keys that this node held then, stamped at or before {@code S}, is now held by the peer
 * too (its bucket agreed, or its records were sent: an exchange sends every record of a differing
 * bucket that is not newer than the round). So the peer holds a tombstone stamped {@code t < S}
 * that this node held when the round started. Per peer, the start of the last such round is kept
 * ("repaired through").
 *
 * <p>Late tombstones: a tombstone that reaches this node after a round started, with a timestamp
 * before that start (a hint, a read repair, a record from another peer's round, a delete still on
 * its way), was not in that round's trees. Once stored, such a tombstone raises the floor of its
 * slot (one of {@value #SLOTS} groups of {@link BucketIndex} buckets) to the current hybrid time:
 * a round counts for a slot's tombstones only if it started after the slot's floor. Rounds are
 * registered as started ({@link #roundStarting}) before their trees are built, and the floor is
 * raised after the tombstone is in the store, so every interleaving is either in the round's tree
 * or below its floor.
 *
 * <p>Membership: the keys a round covers depend on the membership it ran under, so what was
 * learnt under another membership is forgotten, and nothing is purged while a member joins or
 * leaves. Only this node's own rounds count: a round served for a peer ends when the peer has
 * half-closed, which does not tell that the peer applied what it received.
 *
 * <p>Durability: kept in {@value #FILE} in the data dir, written (forced, renamed) after each
 * completed round and at a graceful stop. The floors are exact only in a file written at a
 * graceful stop: after a crash every floor starts at the start time, so that only rounds started
 * after the restart count. A file that is missing or unreadable only delays purging.
 *
 * <p>Threading: rounds complete on the anti-entropy executor, tombstones are reported by the storage
 * writer, the purger asks from the maintenance thread: all state is in concurrent structures, and
 * writing the file is synchronized.
 */
public final class RepairLedger implements ReplicaHoldings, AutoCloseable {

    static final String FILE = "repaired-through";
    /** Slots of late-tombstone floors: 32 KiB of longs. */
    static final int SLOTS = 4096;
    private static final int SLOT_SHIFT = BucketIndex.BUCKET_BITS - Integer.numberOfTrailingZeros(SLOTS);
    private static final String HEADER = "kvorum-repaired-through 1";

    private static final Logger log = LoggerFactory.getLogger(RepairLedger.class);

    private final Path file;
    private final String selfId;
    private final int replicationFactor;
    private final LongSupplier hybridNow;
    private final Map<String, Long> repairedThrough = new ConcurrentHashMap<>();
    private final AtomicLongArray floors = new AtomicLongArray(SLOTS);
    private final AtomicLong latestRoundStart = new AtomicLong();
    private volatile Placement placement;
    private volatile String members;
    private volatile boolean changing;
    private volatile boolean closed;

    /**
     * Reads what a previous run kept in {@code dataDir}, if anything, for a node in {@code topology}.
     *
     * @param hybridNow this node's hybrid logical clock: rounds' starts and floors come from it
     */
    public static RepairLedger open(Path dataDir, String selfId, Topology topology, int replicationFactor,
                                    LongSupplier hybridNow) {
        RepairLedger ledger = new RepairLedger(dataDir.resolve(FILE), selfId, topology, replicationFactor, hybridNow);
        ledger.load();
        ledger.save(false); // a crash from now on loses the floors: the next start must know
        return ledger;
    }

    private RepairLedger(Path file, String selfId, Topology topology, int replicationFactor, LongSupplier hybridNow) {
        this.file = file;
        this.selfId = selfId;
        this.replicationFactor = replicationFactor;
        this.hybridNow = hybridNow;
        this.placement = new Placement(topology);
        this.members = membersOf(topology);
    }

    private static String membersOf(Topology topology) {
        return topology.members().stream().map(ClusterMember::id).sorted().collect(Collectors.joining(","));
    }

    /**
     * Uses a new membership: the members that replicate keys now ({@code current}), and whether a
     * member is joining or leaving (then nothing is purged). What was learnt under other members is
     * forgotten.
     */
    public synchronized void useMembership(Topology current, boolean changing) {
        this.changing = changing;
        String next = membersOf(current);
        if (!next.equals(members)) {
            repairedThrough.clear();
            placement = new Placement(current);
            members = next;
            save(false);
        }
    }

    /**
     * Called once a round this node starts has taken its start (a hybrid timestamp), before it
     * builds its tree.
     */
    public void roundStarting(long roundStart) {
        latestRoundStart.accumulateAndGet(roundStart, Math::max);
    }

    /**
     * A round this node started at {@code roundStart} with {@code peer} completed over
     * {@code scope}: the peer holds every record of the scope this node held then, up to that
     * time. Counts only if the scope covers each key the two replicate under the current membership.
     */
    public synchronized void roundCompleted(String peer, RepairScope scope, long roundStart) {
        if (scope.replicationFactor() < replicationFactor || !membersOf(scope.placement().topology()).equals(members)) {
            return;
        }
        repairedThrough.merge(peer, roundStart, Math::max);
        save(false);
    }

    /**
     * A tombstone stamped {@code timestamp} is in the store now (on the storage writer): one older
     * than a round already started raises its slot's floor.
     */
    public void tombstoneStored(byte[] key, long timestamp) {
        if (timestamp <= latestRoundStart.get()) {
            long now = hybridNow.getAsLong();
            floors.accumulateAndGet(slotOf(key), now, Math::max);
            if (closed) {
                save(false); // after the graceful stop's file: that file's floors are stale now
            }
        }
    }

    @Override
    public boolean heldByEveryReplica(byte[] key, long timestamp) {
        Placement p = placement;
        List<ClusterMember> replicas = p.replicasFor(key, Math.min(replicationFactor, p.size()));
        boolean others = replicas.stream().anyMatch(m -> !m.id().equals(selfId));
        if (!others) {
            return true;
        }
        if (changing) {
            return false;
        }
        long floor = floors.get(slotOf(key));
        for (ClusterMember m : replicas) {
            if (!m.id().equals(selfId)) {
                Long through = repairedThrough.get(m.id());
                if (through == null || through <= timestamp || through <= floor) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Peer id to the start of the last round that counts, for status and tests. */
    public Map<String, Long> repairedThrough() {
        return new TreeMap<>(repairedThrough);
    }

    private static int slotOf(byte[] key) {
        return BucketIndex.bucketOf(key) >>> SLOT_SHIFT;
    }

    /** Writes the file with exact floors: call at a graceful stop, once no round or write runs. */
    @Override
    public void close() {
        closed = true;
        save(true);
    }

    private synchronized void save(boolean clean) {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        text.append("members ").append(members).append('\n');
        text.append("clean ").append(clean).append('\n');
        new TreeMap<>(repairedThrough).forEach((peer, through) ->
                text.append("peer ").append(peer).append(' ').append(Long.toUnsignedString(through)).append('\n'));
        for (int s = 0; s < SLOTS; s++) {
            long floor = floors.get(s);
            if (floor != 0) {
                text.append("floor ").append(s).append(' ').append(Long.toUnsignedString(floor)).append('\n');
            }
        }
        Path temp = file.resolveSibling(FILE + ".tmp");
        try {
            DurableFiles.writeForced(temp, text.toString());
            DurableFiles.replaceForced(temp, file);
        } catch (IOException e) {
            // Only delays purging: the next start knows less, never more.
            log.warn("cannot write {}: tombstones may be kept longer after a restart", file, e);
        }
    }

    /** Reads the file, if any; a file of other members, or one that cannot be read, counts as none. */
    private void load() {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            floorsFromNow();
            return;
        } catch (IOException e) {
            log.warn("cannot read {}: tombstones wait for new anti-entropy rounds", file, e);
            floorsFromNow();
            return;
        }
        Map<String, Long> through = new TreeMap<>();
        long[] loadedFloors = new long[SLOTS];
        boolean clean = false;
        try {
            if (lines.size() < 3 || !lines.get(0).equals(HEADER) || !lines.get(1).equals("members " + members)) {
                floorsFromNow();
                return;
            }
            clean = lines.get(2).equals("clean true");
            for (String line : lines.subList(3, lines.size())) {
                String[] parts = line.split(" ");
                if (parts.length == 3 && parts[0].equals("peer")) {
                    through.put(parts[1], Long.parseUnsignedLong(parts[2]));
                } else if (parts.length == 3 && parts[0].equals("floor")) {
                    loadedFloors[Integer.parseInt(parts[1])] = Long.parseUnsignedLong(parts[2]);
                } else {
                    throw new IllegalArgumentException("unexpected line: " + line);
                }
            }
        } catch (RuntimeException e) {
            log.warn("cannot read {} ({}): tombstones wait for new anti-entropy rounds", file, e.getMessage());
            floorsFromNow();
            return;
        }
        repairedThrough.putAll(through);
        through.values().forEach(t -> latestRoundStart.accumulateAndGet(t, Math::max));
        if (clean) {
            for (int s = 0; s < SLOTS; s++) {
                floors.set(s, loadedFloors[s]);
            }
        } else {
            floorsFromNow(); // a crash: tombstones may have come late since the file was written
        }
    }

    /** Every slot's floor at now: only rounds that start from now on count. */
    private void floorsFromNow() {
        long now = hybridNow.getAsLong();
        for (int s = 0; s < SLOTS; s++) {
            floors.set(s, now);
        }
    }
}
