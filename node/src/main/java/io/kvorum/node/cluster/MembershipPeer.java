package io.kvorum.node.cluster;

import java.util.concurrent.CompletableFuture;

/**
 * One peer's membership service, as the transport reaches it. Every call has a deadline; failures
 * complete the future exceptionally ({@link MembershipChangeException} for a refused change).
 */
public interface MembershipPeer {

    /** The membership the peer knows. */
    CompletableFuture<Membership> fetch();

    /** Has the peer adopt {@code next} if it is newer than its own; completes once it has. */
    CompletableFuture<Void> propose(Membership next);

    /** Asks the peer, the change coordinator, to run {@code change}; completes with its first epoch. */
    CompletableFuture<Membership> change(MembershipChange change);
}
