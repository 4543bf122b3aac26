package io.kvorum.node.membership;

import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.ClusterMembership;
import io.kvorum.node.cluster.MemberState;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.config.Tuning;
import io.kvorum.node.coordinator.JoinSelection;
import io.kvorum.node.coordinator.RangeSource;
import io.kvorum.node.coordinator.Replica;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.node.util.Failures;
import io.kvorum.node.util.NamedThreadFactory;
import io.kvorum.node.util.Pace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A joining node's intake (docs/operations.md#growing-and-shrinking-a-cluster "Join",
 * docs/architecture.md#how-a-join-moves-records): every record of the keys this node will
 * replicate (among the first replication-factor replicas of the coming membership), each taken
 * once, written to local storage, newest version winning, at {@link Tuning.Changes#recordsPerSecond}.
 *
 * <p>Two passes over the current members, in id order, as range scans over their streams (their
 * flow control bounds what is in flight), each member selecting what it sends
 * ({@link JoinSelection}):
 * <ol>
 *   <li>from each member, the whole records of the keys it is the chosen source of: the first
 *       member of the key's placement order that has not failed this node in this attempt (a
 *       member that fails is passed over, and the members after it serve its keys);</li>
 *   <li>from each member, the digests of the other keys it holds, checked against this node's
 *       own versions: only a newer version is fetched (a read from that member). A write
 *       acknowledged by a quorum may be on any member but the chosen one, and the member whose
 *       place this node takes must hand over what it holds: every member is checked, as every
 *       member was read in full before.</li>
 * </ol>
 * A member that sent its chosen keys leaves them out of its digests; one that has not (it failed)
 * sends the digests of every key this node gains. The first pass's failures are retried by the
 * second; a member that fails the second fails the attempt, which is retried. Progress is kept per
 * stream ({@link MoveProgress#JOIN_FILE}); the rest is {@link RecordMover}'s.
 */
public final class JoinStream extends RecordMover {

    private static final Logger log = LoggerFactory.getLogger(JoinStream.class);
    /** The progress key of a member's digests pass: its id after this prefix (an id has no ':'). */
    private static final String DIGESTS = "digests:";
    /** Newer versions fetched from a member at once, in its digests pass. */
    private static final int FETCH_WINDOW = 32;

    private final Function<String, RangeSource> sources;
    private final Function<String, Replica> replicas;
    private final Replica local;
    private final RangeSource localRange;

    /**
     * @param sources    each peer's raw range source, by id
     * @param replicas   each peer's replica, by id: where a newer version is fetched from
     * @param local      this node's storage as a replica (keeps the newest version)
     * @param localRange this node's raw entries: its versions, to compare digests with
     * @param settle     how long to wait before the first scan: the request timeout
     */
    public JoinStream(ClusterMembership membership, Function<String, RangeSource> sources,
                      Function<String, Replica> replicas, Replica local, RangeSource localRange, MoveProgress progress,
                      Tuning.Changes tuning, Duration settle) {
        super(membership, MemberState.JOINING, new NamedThreadFactory("join-stream"), progress, tuning, settle, log);
        this.sources = sources;
        this.replicas = replicas;
        this.local = local;
        this.localRange = localRange;
    }

    @Override
    void move(Membership m) throws InterruptedException, ExecutionException, TimeoutException {
        Pace pace = Pace.steady(tuning.recordsPerSecond());
        String self = membership.selfId();
        List<String> current = m.current().members().stream().map(ClusterMember::id).sorted().toList();
        List<String> coming = m.coming().members().stream().map(ClusterMember::id).toList();
        int rf = m.replicationFactor();
        Set<String> passedOver = new TreeSet<>();
        for (String source : current) {
            if (progress.isDone(source)) {
                continue;
            }
            JoinSelection chosen = new JoinSelection(current, coming, rf, self, source, passedOver, JoinSelection.Part.CHOSEN);
            try {
                long taken = take(source(source), source, progress, chosen, local, pace, this::isClosed, n -> { });
                progress.markDone(source);
                log.info("joining: took {} records from {} (of the keys it is the chosen source of)", taken, source);
            } catch (ExecutionException | TimeoutException | IllegalStateException e) {
                passedOver.add(source);
                log.warn("joining: taking records from {} failed ({}); the next replica of each of its keys serves "
                        + "them, and it is checked again", source, Failures.unwrap(e).getMessage());
            }
        }
        for (String source : current) {
            String stream = DIGESTS + source;
            if (progress.isDone(stream)) {
                continue;
            }
            JoinSelection digests = new JoinSelection(current, coming, rf, self, source,
                    progress.isDone(source) ? Set.of() : Set.of(source), JoinSelection.Part.DIGESTS);
            long[] checkedAndTaken = check(source, stream, digests, pace);
            progress.markDone(stream);
            log.info("joining: took {} records from {} (newer than this node's, of {} digests checked)",
                    checkedAndTaken[1], source, checkedAndTaken[0]);
        }
    }

    private RangeSource source(String id) {
        RangeSource source = sources.apply(id);
        if (source == null) {
            throw new IllegalStateException(id + " is not connected");
        }
        return source;
    }

    /**
     * Scans the digests {@code selection} gives from where {@code stream}'s progress left it, and
     * takes each version newer than this node's; returns how many digests it checked and how many
     * records it took.
     */
    private long[] check(String sourceId, String stream, JoinSelection selection, Pace pace)
            throws InterruptedException, ExecutionException, TimeoutException {
        RangeSource source = source(sourceId);
        Replica replica = replicas.apply(sourceId);
        if (replica == null) {
            throw new IllegalStateException(sourceId + " is not connected");
        }
        byte[] after = progress.resumeAfter(stream);
        long checked = 0;
        long taken = 0;
        try (EntryStream entries = source.open(after == null ? FIRST_KEY : successor(after), null, selection)) {
            while (!isClosed()) {
                List<Entry> batch = entries.next().get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                if (batch.isEmpty()) {
                    return new long[] {checked, taken};
                }
                List<Entry> selected = batch.stream().filter(e -> selection.selects(e.key())).toList();
                checked += selected.size();
                taken += selected.isEmpty() ? 0 : takeNewer(selected, replica, pace);
                progress.advance(stream, batch.get(batch.size() - 1).key());
            }
        }
        throw new InterruptedException();
    }

    /**
     * Takes the versions among {@code shown} (digests, or whole tombstones) that are newer than this
     * node's: a tombstone as it came, a value fetched from {@code replica}. Returns how many it took.
     */
    private long takeNewer(List<Entry> shown, Replica replica, Pace pace)
            throws InterruptedException, ExecutionException, TimeoutException {
        boolean[] newer = newerThanOurs(shown);
        long taken = 0;
        List<CompletableFuture<Boolean>> window = new ArrayList<>(FETCH_WINDOW);
        for (int i = 0; i < shown.size(); i++) {
            if (!newer[i]) {
                continue;
            }
            Entry e = shown.get(i);
            pace.acquire();
            if (isWhole(e.record())) {
                window.add(local.write(e.key(), e.record()));
            } else {
                window.add(replica.read(e.key()).thenCompose(record -> record == null
                        ? CompletableFuture.completedFuture(false) : local.write(e.key(), record)));
            }
            taken++;
            if (window.size() == FETCH_WINDOW) {
                CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                window.clear();
            }
        }
        CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
        return taken;
    }

    /**
     * For each of {@code shown} (non-empty, in ascending key order), whether its version is newer
     * than this node's: read by one scan of this node's records over the same keys, not a read per key.
     */
    private boolean[] newerThanOurs(List<Entry> shown) throws InterruptedException, ExecutionException, TimeoutException {
        boolean[] newer = new boolean[shown.size()];
        int i = 0;
        try (EntryStream ours = localRange.open(shown.get(0).key(), successor(shown.get(shown.size() - 1).key()))) {
            while (i < shown.size()) {
                List<Entry> batch = ours.next().get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                if (batch.isEmpty()) {
                    break;
                }
                for (Entry o : batch) {
                    while (i < shown.size() && Arrays.compareUnsigned(shown.get(i).key(), o.key()) < 0) {
                        newer[i++] = true; // this node holds no version of it
                    }
                    if (i < shown.size() && Arrays.equals(shown.get(i).key(), o.key())) {
                        newer[i] = digestOf(shown.get(i).record()).isNewerThan(RecordDigest.of(o.record()));
                        i++;
                    }
                }
            }
        }
        while (i < shown.size()) {
            newer[i++] = true;
        }
        return newer;
    }

    /**
     * Whether an entry of a digests scan is a whole record: a tombstone, or any record from a node of
     * an older version, which ignores the selection (a value of exactly the hash's size is taken for
     * a digest, which at worst costs a read).
     */
    private static boolean isWhole(Record shown) {
        return shown.tombstone() || shown.value().length != RecordDigest.HASH_BYTES;
    }

    private static RecordDigest digestOf(Record shown) {
        return isWhole(shown) ? RecordDigest.of(shown) : JoinSelection.digestOf(shown);
    }

    /** As {@link #take(RangeSource, String, MoveProgress, JoinSelection, Replica, Pace, BooleanSupplier, LongConsumer)} of every entry whose key is {@code mine}. */
    static long take(RangeSource source, String sourceId, MoveProgress progress, Predicate<byte[]> mine, Replica local,
                     Pace pace, BooleanSupplier closed, LongConsumer taken)
            throws InterruptedException, ExecutionException, TimeoutException {
        return take(source.open(startAfter(progress.resumeAfter(sourceId)), null), sourceId, progress, mine, local, pace,
                closed, taken);
    }

    /** As the other {@code take}, of the entries {@code selection} gives, which the source selects itself. */
    static long take(RangeSource source, String sourceId, MoveProgress progress, JoinSelection selection, Replica local,
                     Pace pace, BooleanSupplier closed, LongConsumer taken)
            throws InterruptedException, ExecutionException, TimeoutException {
        // Selected again here: a node of an older version ignores the selection and sends every entry.
        return take(source.open(startAfter(progress.resumeAfter(sourceId)), null, selection), sourceId, progress,
                selection::selects, local, pace, closed, taken);
    }

    private static byte[] startAfter(byte[] after) {
        return after == null ? FIRST_KEY : successor(after);
    }

    /**
     * Reads {@code entries}, opened where {@code progress} left {@code sourceId}, and writes to {@code local} every
     * record whose key is {@code mine}, at {@code pace}, a batch at a time; returns how many it
     * wrote, each batch's count also told to {@code taken}. Shared with {@link RebuildStream}.
     *
     * @throws InterruptedException when {@code closed} turns true before the scan ends
     */
    private static long take(EntryStream entries, String sourceId, MoveProgress progress, Predicate<byte[]> mine,
                             Replica local, Pace pace, BooleanSupplier closed, LongConsumer taken)
            throws InterruptedException, ExecutionException, TimeoutException {
        long total = 0;
        try (EntryStream stream = entries) {
            while (!closed.getAsBoolean()) {
                List<Entry> batch = stream.next().get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                if (batch.isEmpty()) {
                    return total;
                }
                List<CompletableFuture<Boolean>> writes = new ArrayList<>(batch.size());
                for (Entry e : batch) {
                    if (mine.test(e.key())) {
                        pace.acquire();
                        writes.add(local.write(e.key(), e.record()));
                    }
                }
                CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(BATCH_WAIT_SECONDS, TimeUnit.SECONDS);
                total += writes.size();
                taken.accept(writes.size());
                progress.advance(sourceId, batch.get(batch.size() - 1).key());
            }
        }
        throw new InterruptedException();
    }
}
