package io.kvorum.node.cluster;

import io.kvorum.client.placement.ClusterView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A cluster's membership as a node keeps it in its data dir (docs/operations.md#growing-and-shrinking-a-cluster): the cluster's name and
 * {@link ClusterIdentity identity}, an epoch that grows with each change, the members with their
 * {@link MemberState states}, and the replication factor, which is fixed from the cluster's first
 * start. Immutable: each change makes a new membership one epoch later.
 *
 * <p>A change moves through three epochs. It starts with a member {@code joining} or
 * {@code leaving}: writes go to the key's replicas under the {@link #current} membership (normal
 * and leaving members) and under the {@link #coming} one (normal and joining members), reads to the
 * current ones, while the records move. Then {@link #readsFromComing} switches the reads. Last,
 * the joining member becomes normal, or the leaving one is dropped. Nodes adopt an epoch one after
 * another, so two neighbouring epochs must serve together: in every one of them writes reach a
 * quorum of the replicas that the reads of the other use.
 *
 * @param identity        fixed at the first membership and kept through every later one
 * @param states          each member's state, by id; every member of {@code topology} has one
 * @param readsFromComing reads go to the coming membership's replicas (the last step of a change)
 */
public record Membership(String clusterName, String identity, long epoch, Topology topology,
                         Map<String, MemberState> states, int replicationFactor, boolean readsFromComing) {

    /** The epoch of the membership {@code --cluster} seeds. */
    public static final long FIRST_EPOCH = 1;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

    public Membership {
        if (!isClusterName(clusterName)) {
            throw new IllegalArgumentException("not a cluster name: '" + clusterName + "'");
        }
        if (epoch < FIRST_EPOCH) {
            throw new IllegalArgumentException("epoch " + epoch + " is below " + FIRST_EPOCH);
        }
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("replication factor " + replicationFactor + " is below 1");
        }
        states = Map.copyOf(states);
        for (ClusterMember m : topology.members()) {
            if (!states.containsKey(m.id())) {
                throw new IllegalArgumentException("member '" + m.id() + "' has no state");
            }
        }
        if (states.size() != topology.size()) {
            throw new IllegalArgumentException("states name members that are not in the membership");
        }
        if (states.values().stream().filter(s -> s != MemberState.NORMAL).count() > 1) {
            throw new IllegalArgumentException("more than one member is joining or leaving");
        }
        if (readsFromComing && !states.containsValue(MemberState.JOINING) && !states.containsValue(MemberState.LEAVING)) {
            throw new IllegalArgumentException("reads can only switch to the coming membership during a change");
        }
    }

    /** A membership with every member normal and no change in progress. */
    public Membership(String clusterName, String identity, long epoch, Topology topology, int replicationFactor) {
        this(clusterName, identity, epoch, topology, allNormal(topology), replicationFactor, false);
    }

    /** The membership a cluster is first started with. */
    public static Membership first(String clusterName, Topology topology, int replicationFactor) {
        if (replicationFactor > topology.size()) {
            throw new IllegalArgumentException("replication factor " + replicationFactor + " is not between 1 and "
                    + topology.size() + ", the number of members");
        }
        return new Membership(clusterName, ClusterIdentity.of(clusterName, topology, replicationFactor), FIRST_EPOCH,
                topology, replicationFactor);
    }

    /**
     * The membership a {@link ClusterView} describes, with what the view does not carry.
     *
     * @throws IllegalArgumentException when a member's state is unknown or the view is not a valid membership
     */
    public static Membership of(ClusterView view, String identity, boolean readsFromComing) {
        List<ClusterMember> members = new ArrayList<>();
        Map<String, MemberState> states = new HashMap<>();
        for (ClusterView.Member m : view.members()) {
            members.add(new ClusterMember(m.id(), m.host(), m.http(), m.grpc()));
            states.put(m.id(), MemberState.ofJson(m.state()));
        }
        return new Membership(view.name(), identity, view.epoch(), new Topology(members), states,
                view.replicationFactor(), readsFromComing);
    }

    public static boolean isClusterName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    private static Map<String, MemberState> allNormal(Topology topology) {
        Map<String, MemberState> states = new HashMap<>();
        topology.members().forEach(m -> states.put(m.id(), MemberState.NORMAL));
        return states;
    }

    public MemberState state(String id) {
        return states.get(id);
    }

    /** A member is joining or leaving. */
    public boolean inChange() {
        return states.containsValue(MemberState.JOINING) || states.containsValue(MemberState.LEAVING);
    }

    /** The member joining or leaving, or null. */
    public ClusterMember changing() {
        return topology.members().stream().filter(m -> states.get(m.id()) != MemberState.NORMAL).findFirst()
                .orElse(null);
    }

    /** The members that replicate keys now: normal and leaving. */
    public Topology current() {
        return without(MemberState.JOINING);
    }

    /** The members that will replicate keys once the change completes: normal and joining. */
    public Topology coming() {
        return without(MemberState.LEAVING);
    }

    /** The members whose replicas serve reads: {@link #current}, or {@link #coming} once reads switched. */
    public Topology readers() {
        return readsFromComing ? coming() : current();
    }

    /** How many members are normal: the largest {@code from} a request may ask for. */
    public int normalCount() {
        // Asked on every client request: the constructor's invariant (at most one member is not
        // normal) makes two lookups enough.
        boolean changing = states.containsValue(MemberState.JOINING) || states.containsValue(MemberState.LEAVING);
        return states.size() - (changing ? 1 : 0);
    }

    private Topology without(MemberState excluded) {
        return new Topology(topology.members().stream().filter(m -> states.get(m.id()) != excluded).toList());
    }

    /** The next epoch: {@code member} joins. */
    public Membership withJoining(ClusterMember member) {
        List<ClusterMember> members = new ArrayList<>(topology.members());
        members.add(member);
        Map<String, MemberState> next = new HashMap<>(states);
        next.put(member.id(), MemberState.JOINING);
        return new Membership(clusterName, identity, epoch + 1, new Topology(members), next, replicationFactor, false);
    }

    /** The next epoch: member {@code id} leaves. */
    public Membership withLeaving(String id) {
        Map<String, MemberState> next = new HashMap<>(states);
        next.put(id, MemberState.LEAVING);
        return new Membership(clusterName, identity, epoch + 1, topology, next, replicationFactor, false);
    }

    /** The next epoch: the records have moved, and reads go to the coming membership's replicas. */
    public Membership withReadsFromComing() {
        return new Membership(clusterName, identity, epoch + 1, topology, states, replicationFactor, true);
    }

    /** The next epoch: the change is complete; the joining member is normal, the leaving one gone. */
    public Membership completed() {
        Topology members = coming();
        return new Membership(clusterName, identity, epoch + 1, members, allNormal(members), replicationFactor, false);
    }

    /** The next epoch: member {@code id} is removed at once, whatever it held (docs/operations.md#growing-and-shrinking-a-cluster "Remove"). */
    public Membership withRemoved(String id) {
        Topology members = new Topology(topology.members().stream().filter(m -> !m.id().equals(id)).toList());
        Map<String, MemberState> next = new HashMap<>(states);
        next.remove(id);
        return new Membership(clusterName, identity, epoch + 1, members, next, replicationFactor,
                readsFromComing && next.values().stream().anyMatch(s -> s != MemberState.NORMAL));
    }

    /** As {@code GET /v0/cluster} shows it. */
    public ClusterView view() {
        return new ClusterView(clusterName, epoch, topology.members().stream()
                .map(m -> new ClusterView.Member(m.id(), m.host(), m.httpPort(), m.grpcPort(), states.get(m.id()).jsonName()))
                .toList(), replicationFactor);
    }
}
