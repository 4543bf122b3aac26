package io.kvorum.node.cluster;

import io.kvorum.node.cluster.MembershipChangeException.Reason;
import io.kvorum.node.util.Failures;
import io.kvorum.node.util.LogRateLimit;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The membership a node runs with, and the node's part in changing it (docs/operations.md#growing-and-shrinking-a-cluster).
 *
 * <p>Adopting: a membership of a later epoch, proposed by the change coordinator or fetched from a
 * peer whose requests carry a later epoch, is stored in the data dir, then handed to the listeners
 * (which connect new members and re-place keys), and only then acknowledged. Adoption runs on one
 * thread, {@code executor}, in epoch order; an epoch not newer than the node's is ignored.
 *
 * <p>Changing: one member, the change coordinator (the lowest id among the current members, not
 * counting a member being removed), runs every change, one at a time; any other member forwards a
 * change to it. The coordinator first asks every member for its membership, so that a change with a
 * member unreachable is refused before anything moved (503), then adopts the change's first epoch
 * and proposes it to every member. A change that finds another in progress is refused (409), and
 * that is checked first.
 */
public final class ClusterMembership implements MembershipResponder {

    private static final Logger log = LoggerFactory.getLogger(ClusterMembership.class);

    private final String selfId;
    private final MembershipStore store;
    private final Executor executor;
    private final List<Consumer<Membership>> listeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean fetching = new AtomicBoolean();
    /** After a fetched membership was not taken, no other fetch starts before this {@link System#nanoTime}. */
    private volatile long quietUntil = System.nanoTime();
    private static final long FETCH_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Refused proposals, logged at most once a minute per sender. */
    private final LogRateLimit refusals = new LogRateLimit(Duration.ofMinutes(1));
    private final AtomicBoolean changing = new AtomicBoolean();
    /** The newest epoch a member's request carried ({@link #sawEpoch}). */
    private final AtomicLong newestSeen = new AtomicLong();
    private volatile Function<String, MembershipPeer> peers = id -> null;
    /** Null: a new node learns its join from the answer to its request alone. */
    private volatile BiFunction<ClusterMember, Membership, CompletableFuture<Void>> newcomerProposals;
    private volatile Membership current;
    private volatile boolean member;

    /**
     * @param stored   the membership stored in the data dir (or seeded from the options)
     * @param executor runs adoptions and changes, one at a time
     */
    public ClusterMembership(String selfId, Membership stored, MembershipStore store, Executor executor) {
        this(selfId, stored, store, executor, true);
    }

    /**
     * @param member false for a node started with {@code --join} that has no stored membership yet:
     *               {@code stored} is then what its options describe, until {@link #adoptJoined}
     */
    public ClusterMembership(String selfId, Membership stored, MembershipStore store, Executor executor, boolean member) {
        this.selfId = selfId;
        this.current = stored;
        this.store = store;
        this.executor = executor;
        this.member = member;
    }

    @Override
    public boolean isMember() {
        return member;
    }

    /** Where the peers' membership services are, by id (null for one that is not connected). */
    public void usePeers(Function<String, MembershipPeer> peers) {
        this.peers = peers;
    }

    /**
     * How the change coordinator proposes a join's first epoch to the new node, which is no peer
     * yet, before any member adopts it ({@link #run}).
     */
    public void useNewcomerProposals(BiFunction<ClusterMember, Membership, CompletableFuture<Void>> proposals) {
        this.newcomerProposals = proposals;
    }

    /** Called with each membership adopted, on the adopting thread, before it is acknowledged. */
    public void addListener(Consumer<Membership> listener) {
        listeners.add(listener);
    }

    public String selfId() {
        return selfId;
    }

    @Override
    public Membership membership() {
        return current;
    }

    @Override
    public CompletableFuture<Void> adopt(Membership proposed) {
        return CompletableFuture.runAsync(() -> adoptNow(proposed), executor);
    }

    /**
     * Adopts a newer epoch only from a member that may have proposed it: the change coordinator
     * (docs/operations.md#security). Any other sender is refused ({@code INVALID}) and logged, and
     * nothing changes; a node that missed epochs learns them through {@link #sawEpoch} instead.
     */
    @Override
    public CompletableFuture<Void> adoptProposal(String sender, Membership proposed) {
        return CompletableFuture.runAsync(() -> {
            if (!member) {
                adoptOwnJoin(sender, proposed);
                return;
            }
            Membership m = current;
            Set<String> proposers = proposers(m, proposed);
            if (proposed.epoch() > m.epoch() && !proposers.contains(sender)) {
                String why = "epoch " + proposed.epoch() + " proposed by " + sender + " refused: only the change "
                        + "coordinator proposes epochs (" + String.join(" or ", proposers) + " after epoch " + m.epoch() + ")";
                if (refusals.admit(sender)) {
                    log.warn("{}", why);
                }
                throw new MembershipChangeException(Reason.INVALID, why);
            }
            adoptNow(proposed);
        }, executor);
    }

    /**
     * The members that may propose {@code proposed} to a node that knows {@code m}: the change
     * coordinator of a change that starts from {@code m} ({@link #coordinatorFor}). That is the
     * lowest current member, or, for the one proposal that removes it, the lowest but one.
     */
    static Set<String> proposers(Membership m, Membership proposed) {
        Set<String> out = new TreeSet<>();
        String lowest = lowestCurrent(m, null);
        if (lowest != null) {
            out.add(lowest);
            String next = lowestCurrent(m, lowest);
            if (next != null && proposed.equals(m.withRemoved(lowest))) {
                out.add(next);
            }
        }
        return out;
    }

    /**
     * A node that asked to join, not a member yet, takes the first epoch of its own join from the
     * change coordinator, before any member routes requests to it: a membership of the cluster it
     * asked to join (by name: it does not know the identity yet) that has this node, with the
     * address of its options, joining, proposed by that membership's change coordinator.
     * Anything else is refused ({@code INVALID}).
     */
    private void adoptOwnJoin(String sender, Membership proposed) {
        Membership m = current;
        ClusterMember self = m.topology().member(selfId);
        boolean ownJoin = proposed.clusterName().equals(m.clusterName())
                && proposed.state(selfId) == MemberState.JOINING
                && self != null && self.equals(proposed.topology().member(selfId));
        if (!ownJoin || !sender.equals(lowestCurrent(proposed, null))) {
            String why = "epoch " + proposed.epoch() + " proposed by " + sender + " refused: this node is not a member "
                    + "yet, and it is not this node's join proposed by its change coordinator";
            if (refusals.admit(sender)) {
                log.warn("{}", why);
            }
            throw new MembershipChangeException(Reason.INVALID, why);
        }
        install(proposed);
        member = true;
    }

    /**
     * Takes {@code joined}, the answer to this node's request to join, as its membership: the
     * cluster's identity and replication factor replace what the options seeded. Nothing to do
     * when the change coordinator proposed it first ({@link #adoptOwnJoin}).
     */
    public CompletableFuture<Void> adoptJoined(Membership joined) {
        return CompletableFuture.runAsync(() -> {
            if (member && joined.identity().equals(current.identity()) && joined.epoch() <= current.epoch()) {
                return;
            }
            install(joined);
            member = true;
        }, executor);
    }

    private void adoptNow(Membership proposed) {
        Membership m = current;
        if (!proposed.identity().equals(m.identity())) {
            throw new MembershipChangeException(Reason.INVALID, "membership of another cluster (identity "
                    + proposed.identity() + ", ours " + m.identity() + ")");
        }
        if (proposed.epoch() < m.epoch() || proposed.equals(m)) {
            return;
        }
        if (proposed.epoch() == m.epoch()) {
            throw new MembershipChangeException(Reason.IN_PROGRESS, "epoch " + m.epoch() + " is another membership here");
        }
        install(proposed);
    }

    private void install(Membership next) {
        try {
            store.store(next);
        } catch (IOException e) {
            throw new MembershipChangeException(Reason.UNAVAILABLE, selfId + " cannot store the membership: " + e.getMessage());
        }
        Membership before = current;
        current = next;
        log.info("membership epoch {} adopted (was {}): {}", next.epoch(), before.epoch(), describe(next));
        for (Consumer<Membership> listener : listeners) {
            listener.accept(next);
        }
    }

    static String describe(Membership m) {
        StringBuilder b = new StringBuilder();
        for (ClusterMember member : m.topology().members()) {
            if (!b.isEmpty()) {
                b.append(", ");
            }
            b.append(member.id()).append(' ').append(m.state(member.id()).jsonName());
        }
        return b.append(m.readsFromComing() ? " (reads from the coming membership)" : "").toString();
    }

    /**
     * The newest epoch this node knows of: its own, or a newer one a member's request carried,
     * which it may not have adopted yet (a change under way, seen before its proposal arrived).
     */
    public long newestEpochSeen() {
        return Math.max(newestSeen.get(), current.epoch());
    }

    @Override
    public void sawEpoch(String sender, long epoch) {
        newestSeen.accumulateAndGet(epoch, Math::max);
        if (epoch <= current.epoch() || System.nanoTime() - quietUntil < 0 || !fetching.compareAndSet(false, true)) {
            return;
        }
        // A member this node does not know yet: any peer knows the epoch by now or soon.
        String from = peers.apply(sender) != null ? sender : anyPeerId();
        MembershipPeer peer = from == null ? null : peers.apply(from);
        if (peer == null) {
            fetching.set(false);
            return;
        }
        peer.fetch().thenCompose(fetched -> vouchedFor(from, fetched)).thenCompose(this::adopt).whenComplete((ignored, error) -> {
            if (error != null) {
                quietUntil = System.nanoTime() + FETCH_BACKOFF_NANOS; // each request would start another fetch
                log.info("did not take membership epoch {} seen on a request of {}: {}", epoch, sender,
                        Failures.unwrap(error).getMessage());
            }
            fetching.set(false);
        });
    }

    /**
     * What of a membership fetched from the peer {@code sender} this node may adopt: the membership
     * itself when that peer may have proposed it
     * ({@link #proposers}); otherwise the same membership served by another member, or a newer one
     * served by a member that may have proposed that. No single member but the change coordinator
     * installs a membership on its peers (docs/operations.md#security).
     */
    private CompletableFuture<Membership> vouchedFor(String sender, Membership fetched) {
        Membership m = current;
        if (fetched.epoch() <= m.epoch() || proposers(m, fetched).contains(sender)) {
            return CompletableFuture.completedFuture(fetched);
        }
        Map<String, CompletableFuture<Membership>> others = new TreeMap<>();
        for (ClusterMember member : m.topology().members()) {
            MembershipPeer p = member.id().equals(selfId) || member.id().equals(sender) ? null : peers.apply(member.id());
            if (p != null) {
                others.put(member.id(), p.fetch().exceptionally(error -> null));
            }
        }
        return CompletableFuture.allOf(others.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            for (CompletableFuture<Membership> theirs : others.values()) {
                if (fetched.equals(theirs.join())) {
                    return fetched;
                }
            }
            for (Map.Entry<String, CompletableFuture<Membership>> e : others.entrySet()) {
                Membership theirs = e.getValue().join();
                if (theirs != null && theirs.epoch() > m.epoch() && proposers(m, theirs).contains(e.getKey())) {
                    return theirs;
                }
            }
            throw new MembershipChangeException(Reason.INVALID, "no other member serves it, and " + sender
                    + " does not coordinate membership changes");
        });
    }

    private String anyPeerId() {
        for (ClusterMember m : current.topology().members()) {
            if (!m.id().equals(selfId) && peers.apply(m.id()) != null) {
                return m.id();
            }
        }
        return null;
    }

    @Override
    public CompletableFuture<Membership> changeFrom(String sender, MembershipChange change) {
        boolean own = change.member().id().equals(sender);
        boolean allowed = switch (change.kind()) {
            case MOVED -> own;
            case JOIN -> own || current.state(sender) != null;
            case LEAVE, REMOVE -> current.state(sender) != null;
        };
        if (!allowed) {
            String why = change.kind() + " of " + change.member().id() + " sent by " + sender + " refused: "
                    + (change.kind() == MembershipChange.Kind.MOVED ? "only the member that moved its records says so"
                    : sender + " is not a member");
            if (refusals.admit(sender)) {
                log.warn("{}", why);
            }
            return failed(Reason.INVALID, why);
        }
        return change(change);
    }

    @Override
    public CompletableFuture<Membership> change(MembershipChange change) {
        Membership m = current;
        String coordinator = coordinatorFor(m, change);
        if (coordinator == null) {
            return failed(Reason.INVALID, "no member can coordinate removing the last member");
        }
        if (coordinator.equals(selfId)) {
            return coordinate(change);
        }
        MembershipPeer peer = peers.apply(coordinator);
        CompletableFuture<Membership> forwarded = peer == null
                ? failed(Reason.UNAVAILABLE, "the change coordinator " + coordinator + " is unreachable")
                : peer.change(change);
        // docs/operations.md#growing-and-shrinking-a-cluster: a change in progress is answered 409 before an unreachable member 503, the
        // coordinator included: what this node knows of the change in progress is answer enough.
        return forwarded.exceptionallyCompose(error -> {
            MembershipChangeException refusal = Failures.unwrap(error) instanceof MembershipChangeException e ? e : null;
            boolean unreachable = refusal == null || refusal.reason() == Reason.UNAVAILABLE;
            MembershipChangeException inProgress = unreachable ? inProgressHere(m, change) : null;
            return CompletableFuture.failedFuture(inProgress != null ? inProgress : error);
        });
    }

    /** The 409 this node's own view gives {@code change}, or null when it shows no change in its way. */
    private MembershipChangeException inProgressHere(Membership m, MembershipChange change) {
        try {
            firstStep(m, change);
            return null;
        } catch (MembershipChangeException e) {
            return e.reason() == Reason.IN_PROGRESS ? e : null;
        }
    }

    /** The lowest id among the current members, not counting one being removed. */
    static String coordinatorFor(Membership m, MembershipChange change) {
        return lowestCurrent(m, change.kind() == MembershipChange.Kind.REMOVE ? change.member().id() : null);
    }

    /** The lowest id among {@code m}'s current members but {@code excluded} (may be null), or null when none. */
    private static String lowestCurrent(Membership m, String excluded) {
        return m.current().members().stream()
                .map(ClusterMember::id)
                .filter(id -> !id.equals(excluded))
                .min(String::compareTo)
                .orElse(null);
    }

    private CompletableFuture<Membership> coordinate(MembershipChange change) {
        if (!changing.compareAndSet(false, true)) {
            return failed(Reason.IN_PROGRESS, "another membership change is in progress on the change coordinator; one change at a time");
        }
        CompletableFuture<Membership> result;
        try {
            result = CompletableFuture.supplyAsync(() -> firstStep(current, change), executor)
                    .thenCompose(next -> next == current ? CompletableFuture.completedFuture(next) : run(change, next));
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.whenComplete((m, error) -> changing.set(false));
    }

    /** The change's first epoch, or {@code m} itself when the change is already made (a retry). */
    private Membership firstStep(Membership m, MembershipChange change) {
        ClusterMember member = change.member();
        MemberState state = m.state(member.id());
        ClusterMember changing = m.changing();
        switch (change.kind()) {
            case JOIN -> {
                if (state == MemberState.JOINING && m.topology().member(member.id()).equals(member)) {
                    return m; // the new node asks again, e.g. after a restart
                }
                requireNoChange(m, "join " + member.id());
                if (state != null) {
                    throw new MembershipChangeException(Reason.INVALID, member.id() + " is a member already");
                }
                for (ClusterMember other : m.topology().members()) {
                    if (other.host().equals(member.host())
                            && (other.httpPort() == member.httpPort() || other.grpcPort() == member.grpcPort()
                                || other.httpPort() == member.grpcPort() || other.grpcPort() == member.httpPort())) {
                        throw new MembershipChangeException(Reason.INVALID, member + " uses an address of member " + other.id());
                    }
                }
                return m.withJoining(member);
            }
            case LEAVE -> {
                if (state == MemberState.LEAVING) {
                    return m;
                }
                requireNoChange(m, "leave " + member.id());
                requireMember(m, member.id());
                if (m.normalCount() <= 1) {
                    throw new MembershipChangeException(Reason.INVALID, member.id() + " is the last member; it cannot leave");
                }
                return m.withLeaving(member.id());
            }
            case REMOVE -> {
                if (changing != null && !changing.id().equals(member.id())) {
                    throw inProgress(m, "remove " + member.id());
                }
                requireMember(m, member.id());
                if (state == MemberState.NORMAL && m.normalCount() <= 1) {
                    throw new MembershipChangeException(Reason.INVALID, member.id() + " is the last member; it cannot be removed");
                }
                return m.withRemoved(member.id());
            }
            case MOVED -> {
                if (changing == null && state == MemberState.NORMAL || state == null) {
                    // Completed already: the member asks again because the answer was lost. A
                    // member that left learns it from this answer (it has no other way back in).
                    return m;
                }
                if (changing == null || !changing.id().equals(member.id())) {
                    throw new MembershipChangeException(Reason.INVALID, member.id() + " is not joining or leaving");
                }
                return m.readsFromComing() ? m.completed() : m.withReadsFromComing();
            }
            default -> throw new IllegalArgumentException("unknown change " + change.kind());
        }
    }

    private static void requireNoChange(Membership m, String what) {
        if (m.inChange()) {
            throw inProgress(m, what);
        }
    }

    private static MembershipChangeException inProgress(Membership m, String what) {
        ClusterMember c = m.changing();
        return new MembershipChangeException(Reason.IN_PROGRESS, "cannot " + what + ": " + c.id() + " is "
                + m.state(c.id()).jsonName() + " (epoch " + m.epoch() + "); one change at a time");
    }

    private static void requireMember(Membership m, String id) {
        if (m.state(id) == null) {
            throw new MembershipChangeException(Reason.INVALID, id + " is not a member (members: "
                    + m.topology().members().stream().map(ClusterMember::id).toList() + ")");
        }
    }

    /**
     * Checks that every member this change needs answers, then adopts {@code next} and proposes it
     * to them. A MOVED goes on to the completing epoch once every member has the one that switched
     * the reads: two members must never be more than one step of a change apart.
     */
    private CompletableFuture<Membership> run(MembershipChange change, Membership next) {
        List<Membership> steps = new ArrayList<>();
        if (change.kind() == MembershipChange.Kind.MOVED && !next.inChange()) {
            steps.add(current); // reads switched here already: make sure every member has it too
        }
        steps.add(next);
        if (change.kind() == MembershipChange.Kind.MOVED && next.inChange()) {
            steps.add(next.completed());
        }
        CompletableFuture<Membership> chain = reachable(current, change)
                .thenCompose(v -> refuseRemovingOneThatAnswers(current, change))
                .thenCompose(v -> newcomerAdopts(change, next)).thenApply(v -> null);
        for (Membership step : steps) {
            chain = chain.thenCompose(previous -> adoptAndPropose(step, change));
        }
        return chain;
    }

    /**
     * Has the new node of a join adopt the join's first epoch before this node and the members do
     * (docs/architecture.md#how-a-join-moves-records): once they have, they send it writes, hints
     * and heartbeats, which it refused while it did not know the epoch, and they took it for down.
     * Fails with 503 when it does not acknowledge it; nothing was adopted then but by the new node,
     * which asks again.
     */
    private CompletableFuture<Void> newcomerAdopts(MembershipChange change, Membership next) {
        BiFunction<ClusterMember, Membership, CompletableFuture<Void>> proposals = newcomerProposals;
        if (change.kind() != MembershipChange.Kind.JOIN || proposals == null) {
            return CompletableFuture.completedFuture(null);
        }
        ClusterMember newcomer = next.topology().member(change.member().id());
        return proposals.apply(newcomer, next).exceptionallyCompose(error -> failed(Reason.UNAVAILABLE,
                "the new node " + newcomer.id() + " did not adopt epoch " + next.epoch() + ": "
                        + Failures.unwrap(error).getMessage()));
    }

    /** The members that must acknowledge a change: all but this node and a member being removed. */
    private List<ClusterMember> participants(Membership m, MembershipChange change) {
        List<ClusterMember> out = new ArrayList<>();
        for (ClusterMember member : m.topology().members()) {
            boolean removed = change.kind() == MembershipChange.Kind.REMOVE && member.id().equals(change.member().id());
            boolean newcomer = change.kind() == MembershipChange.Kind.JOIN && member.id().equals(change.member().id());
            if (!member.id().equals(selfId) && !removed && !newcomer) {
                out.add(member);
            }
        }
        return out;
    }

    /**
     * Fails the removal of a member that still answers (400): a removal drops its copies without
     * handing them over, which only a member gone for good may cost (until a repair, a read by
     * quorum could miss writes that it acknowledged). A member that is up leaves instead. A member
     * that answers while it joins or leaves is in the change in progress, which is answered first
     * (409, docs/operations.md#growing-and-shrinking-a-cluster): only its death makes its removal
     * the exception to one change at a time.
     */
    private CompletableFuture<Void> refuseRemovingOneThatAnswers(Membership m, MembershipChange change) {
        MembershipPeer removed = change.kind() == MembershipChange.Kind.REMOVE ? peers.apply(change.member().id()) : null;
        if (removed == null) {
            return CompletableFuture.completedFuture(null);
        }
        String id = change.member().id();
        return removed.fetch().handle((theirs, error) -> {
            if (error == null && m.state(id) != MemberState.NORMAL) {
                throw inProgress(m, "remove " + id + ", which answers");
            }
            if (error == null) {
                throw new MembershipChangeException(Reason.INVALID, id + " is up (it answered the change coordinator): "
                        + "removing it would drop its copies without handing them over; POST /v0/cluster/leave?id=" + id
                        + " moves them first, or stop it if it is gone for good and remove it then");
            }
            return null;
        });
    }

    /** Fails with 503 naming the participants that do not answer, or that know another epoch. */
    private CompletableFuture<Void> reachable(Membership m, MembershipChange change) {
        List<ClusterMember> members = participants(m, change);
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (ClusterMember member : members) {
            MembershipPeer peer = peers.apply(member.id());
            CompletableFuture<String> answer = peer == null
                    ? CompletableFuture.completedFuture(member.id() + " (not connected)")
                    : peer.fetch().handle((theirs, error) -> error != null ? member.id() + " (unreachable)"
                            : theirs.epoch() > m.epoch() ? member.id() + " (knows a newer epoch, " + theirs.epoch() + ")"
                            : null);
            answers.add(answer);
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).thenAccept(v -> {
            List<String> missing = answers.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList();
            if (!missing.isEmpty()) {
                throw new MembershipChangeException(Reason.UNAVAILABLE, "every member must acknowledge a change; "
                        + "not reached: " + String.join(", ", missing));
            }
        });
    }

    /**
     * Adopts {@code next} here and proposes it to every participant; completes with it once all
     * acknowledged, or fails with 503 naming those that did not (they learn it from their peers).
     *
     * <p>An epoch that no longer has this node (the change coordinator completing its own leave) is
     * proposed first and adopted here after: a node that adopts it drops its connections to the
     * members, and none of them would ever hear of it. They would wait for the leave to end forever.
     */
    private CompletableFuture<Membership> adoptAndPropose(Membership next, MembershipChange change) {
        if (next.state(selfId) != null) {
            return adopt(next).thenCompose(v -> propose(next, change));
        }
        return propose(next, change).handle((proposed, error) -> error)
                .thenCompose(error -> adopt(next).thenCompose(v -> error == null ? CompletableFuture.completedFuture(next)
                        : CompletableFuture.<Membership>failedFuture(Failures.unwrap(error))));
    }

    /** Proposes {@code next} to every participant; fails with 503 naming those that did not acknowledge it. */
    private CompletableFuture<Membership> propose(Membership next, MembershipChange change) {
        List<ClusterMember> members = participants(next, change);
        List<CompletableFuture<String>> acks = new ArrayList<>();
        for (ClusterMember member : members) {
            MembershipPeer peer = peers.apply(member.id());
            acks.add(peer == null ? CompletableFuture.completedFuture(member.id())
                    : peer.propose(next).handle((ok, error) -> error == null ? null : member.id()));
        }
        return CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).thenApply(all -> {
            List<String> missing = acks.stream().map(CompletableFuture::join).filter(Objects::nonNull).toList();
            if (!missing.isEmpty()) {
                throw new MembershipChangeException(Reason.UNAVAILABLE, "epoch " + next.epoch()
                        + " was not acknowledged by " + String.join(", ", missing) + "; they will learn it from their peers");
            }
            return next;
        });
    }

    private static <T> CompletableFuture<T> failed(Reason reason, String message) {
        return CompletableFuture.failedFuture(new MembershipChangeException(reason, message));
    }
}
