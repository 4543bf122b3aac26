package io.kvorum.node.cluster;

import java.util.concurrent.CompletableFuture;

/**
 * What a node serves of its membership to its peers, and what its transport needs of it: the
 * names and epoch every request carries, and where an epoch seen on a request is reported.
 */
public interface MembershipResponder {

    /**
     * False while this node, started with {@code --join}, waits for the cluster to accept it: its
     * membership is the one its options describe, without the cluster's identity.
     */
    boolean isMember();

    /** The membership this node knows now. */
    Membership membership();

    /** Adopts {@code proposed} if it is newer (stores it, then uses it); completes once done. */
    CompletableFuture<Void> adopt(Membership proposed);

    /**
     * Adopts {@code proposed}, proposed by the peer {@code sender}, if it is newer and {@code sender}
     * may propose it (the change coordinator); otherwise fails with a {@link MembershipChangeException}.
     */
    CompletableFuture<Void> adoptProposal(String sender, Membership proposed);

    /**
     * Runs {@code change}, sent by the peer {@code sender}, as {@link #change} does, if that peer may
     * send it: a {@code MOVED} only comes from the member that moved its records, a {@code JOIN}
     * from the new node itself or from a member that forwards it.
     */
    CompletableFuture<Membership> changeFrom(String sender, MembershipChange change);

    /** Runs {@code change} if this node is the change coordinator, else forwards it there. */
    CompletableFuture<Membership> change(MembershipChange change);

    /** A request from {@code sender} carried {@code epoch}: a newer one is fetched from the sender. */
    void sawEpoch(String sender, long epoch);
}
