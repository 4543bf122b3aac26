package io.kvorum.node.coordinator;

import io.kvorum.client.placement.Rendezvous;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.EntryStream;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Which entries of one current member's range a joining node takes from it
 * (docs/architecture.md#how-a-join-moves-records), so that each record crosses once. The joining
 * node, the taker, gains a key when it is among the key's first replication-factor replicas over
 * the coming members. The key's chosen source is the first member of its placement order over the
 * current members that is not {@linkplain #passedOver() passed over}: its first live old replica.
 * A {@link Part#CHOSEN} scan of the source sends the whole records of the keys the taker gains
 * whose chosen source it is; a {@link Part#DIGESTS} scan the digests of the others it holds, for
 * the taker to fetch only the versions newer than its own.
 *
 * <p>The source applies the selection where the records are ({@link RangeSource#open(byte[], byte[], JoinSelection)}),
 * so that what is not selected never travels. The lists come from a peer: the constructor checks
 * them, and a selection costs the source a placement per key, bounded by {@link #MAX_MEMBERS}.
 * Immutable.
 */
public final class JoinSelection {

    /** What a scan sends. */
    public enum Part {
        /** The keys gained whose chosen source is the source: whole records. */
        CHOSEN,
        /** The keys gained whose chosen source is another member: digests ({@link #digestOf}). */
        DIGESTS
    }

    /** The most members a selection may name on either side. */
    static final int MAX_MEMBERS = 1024;

    private final List<String> current;
    private final List<String> coming;
    private final int replicationFactor;
    private final String taker;
    private final String source;
    private final Set<String> passedOver;
    private final Part part;
    private final Rendezvous currentOrder;
    private final Rendezvous comingOrder;
    private final int gainedCount;

    /**
     * @param current           the current members' ids (normal and leaving)
     * @param coming            the coming members' ids (normal and joining), the taker among them
     * @param replicationFactor the cluster's
     * @param taker             the joining node
     * @param source            the member scanned, one of {@code current}
     * @param passedOver        members not to choose (they failed the taker); may name any id
     * @throws IllegalArgumentException when the lists are empty, too long, name an id twice or a
     *                                  malformed id, or do not hold the taker and the source
     */
    public JoinSelection(List<String> current, List<String> coming, int replicationFactor, String taker, String source,
                         Collection<String> passedOver, Part part) {
        this.current = checkedIds(current, "current");
        this.coming = checkedIds(coming, "coming");
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("replication factor " + replicationFactor + " is below 1");
        }
        if (!this.coming.contains(taker)) {
            throw new IllegalArgumentException("the taker " + taker + " is not among the coming members");
        }
        if (!this.current.contains(source)) {
            throw new IllegalArgumentException("the source " + source + " is not among the current members");
        }
        if (passedOver.size() > MAX_MEMBERS) {
            throw new IllegalArgumentException("more than " + MAX_MEMBERS + " members passed over");
        }
        this.replicationFactor = replicationFactor;
        this.taker = taker;
        this.source = source;
        this.passedOver = Set.copyOf(new TreeSet<>(passedOver));
        this.part = part;
        this.currentOrder = Rendezvous.over(this.current); // ids checked above: distinct and non-empty
        this.comingOrder = Rendezvous.over(this.coming);
        this.gainedCount = Math.min(replicationFactor, this.coming.size());
    }

    private static List<String> checkedIds(List<String> ids, String what) {
        if (ids.isEmpty() || ids.size() > MAX_MEMBERS) {
            throw new IllegalArgumentException(what + " members: " + ids.size() + ", not 1 to " + MAX_MEMBERS);
        }
        for (String id : ids) {
            if (!Topology.isNodeId(id)) {
                throw new IllegalArgumentException(what + " members: not a member id");
            }
        }
        if (new TreeSet<>(ids).size() != ids.size()) {
            throw new IllegalArgumentException(what + " members: an id is given twice");
        }
        return List.copyOf(ids);
    }

    public List<String> current() {
        return current;
    }

    public List<String> coming() {
        return coming;
    }

    public int replicationFactor() {
        return replicationFactor;
    }

    public String taker() {
        return taker;
    }

    public String source() {
        return source;
    }

    public Set<String> passedOver() {
        return passedOver;
    }

    public Part part() {
        return part;
    }

    /** Whether the taker is among the key's first replication-factor replicas over the coming members. */
    public boolean gains(byte[] key) {
        return comingOrder.replicas(key, gainedCount).contains(taker);
    }

    /** The key's chosen source: the first current member in its placement order not passed over; null if none. */
    public String chosenSource(byte[] key) {
        if (passedOver.isEmpty()) {
            return currentOrder.replicas(key, 1).get(0);
        }
        for (String id : currentOrder.replicas(key, currentOrder.size())) {
            if (!passedOver.contains(id)) {
                return id;
            }
        }
        return null;
    }

    /** Whether a scan of the source sends the key. */
    public boolean selects(byte[] key) {
        if (!gains(key)) {
            return false;
        }
        boolean chosen = source.equals(chosenSource(key));
        return part == Part.CHOSEN ? chosen : !chosen;
    }

    /** What a scan sends of a selected entry: the entry, or for {@link Part#DIGESTS} a value's digest in its place. */
    Entry shown(Entry e) {
        Record r = e.record();
        if (part == Part.CHOSEN || r.tombstone()) {
            return e;
        }
        RecordDigest d = RecordDigest.of(r);
        return new Entry(e.key(), new Record(r.timestamp(), r.writer(), false, r.expiresAtMillis(), d.valueHash()));
    }

    /**
     * The digest of the version an entry of a {@link Part#DIGESTS} scan stands for. A tombstone is
     * sent whole, and is its own record.
     *
     * @throws IllegalArgumentException when the entry carries no digest (a value not of the hash's size)
     */
    public static RecordDigest digestOf(Record shown) {
        if (shown.tombstone()) {
            return RecordDigest.of(shown);
        }
        return new RecordDigest(shown.timestamp(), shown.writer(), false, shown.expiresAtMillis(), shown.value());
    }

    /** {@code entries} with only the selected entries, {@linkplain #shown as sent}; closing it closes {@code entries}. */
    public EntryStream select(EntryStream entries) {
        return new Selected(entries);
    }

    /**
     * The selected entries of a stream. A batch with none selected is not passed on (an empty
     * batch would end the stream): the next is read at once, in a loop while batches come
     * completed, so that a long run of unselected keys does not deepen the stack.
     */
    private final class Selected implements EntryStream {
        private final EntryStream entries;

        Selected(EntryStream entries) {
            this.entries = entries;
        }

        @Override
        public CompletableFuture<List<Entry>> next() {
            CompletableFuture<List<Entry>> out = new CompletableFuture<>();
            pull(out);
            return out;
        }

        private void pull(CompletableFuture<List<Entry>> out) {
            while (true) {
                CompletableFuture<List<Entry>> batch = entries.next();
                if (!batch.isDone()) {
                    batch.whenComplete((b, error) -> {
                        try {
                            if (error != null) {
                                out.completeExceptionally(error);
                            } else if (!deliver(b, out)) {
                                pull(out);
                            }
                        } catch (RuntimeException e) {
                            out.completeExceptionally(e);
                        }
                    });
                    return;
                }
                List<Entry> b;
                try {
                    b = batch.join();
                } catch (CompletionException e) {
                    out.completeExceptionally(e.getCause());
                    return;
                } catch (RuntimeException e) {
                    out.completeExceptionally(e);
                    return;
                }
                if (deliver(b, out)) {
                    return;
                }
            }
        }

        /** Completes {@code out} with the selected entries of {@code batch}, unless there are none and the stream goes on. */
        private boolean deliver(List<Entry> batch, CompletableFuture<List<Entry>> out) {
            if (batch.isEmpty()) {
                out.complete(batch);
                return true;
            }
            List<Entry> kept = new ArrayList<>();
            for (Entry e : batch) {
                if (selects(e.key())) {
                    kept.add(shown(e));
                }
            }
            if (kept.isEmpty()) {
                return false;
            }
            out.complete(kept);
            return true;
        }

        @Override
        public void close() {
            entries.close();
        }
    }

    @Override
    public String toString() {
        return part + " of " + source + " for " + taker;
    }
}
