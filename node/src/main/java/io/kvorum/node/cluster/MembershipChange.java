package io.kvorum.node.cluster;

/**
 * A membership change as members forward it to the change coordinator (docs/operations.md#growing-and-shrinking-a-cluster).
 *
 * @param member the member it is about; for {@link Kind#JOIN} the new node's own entry, for the
 *               others only its id counts
 */
public record MembershipChange(Kind kind, ClusterMember member) {

    /**
     * Whether {@code sender} may send this change although it is not a member: only the
     * {@link Kind#MOVED} of its own leave, asked again after the answer that completed the leave
     * was lost. The coordinator answers it with the membership, which no longer has it, and that
     * answer is how it learns that it left. Anything else from a node that is not a member is
     * refused.
     */
    public boolean mayComeFromFormerMember(String sender) {
        return kind == Kind.MOVED && member.id().equals(sender);
    }

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
