package io.kvorum.node.cluster;

/**
 * A membership change as members forward it to the change coordinator (SPEC §8).
 *
 * @param member the member it is about; for {@link Kind#JOIN} the new node's own entry, for the
 *               others only its id counts
 */
public record MembershipChange(Kind kind, ClusterMember member) {

    public enum Kind {
        /** The member, a new node, joins. */
        JOIN,
        /** The member hands its records over, then is dropped. */
        LEAVE,
        /** The member, gone for good, is dropped at once. */
        REMOVE,
        /** The member joining or leaving has moved every record: the change completes. */
        MOVED
    }
}
