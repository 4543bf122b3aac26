package io.kvorum.node.cluster;

import io.kvorum.client.placement.ClusterView;

/** A member's part in placement (docs/operations.md#growing-and-shrinking-a-cluster). */
public enum MemberState {
    /** Replicates keys under the current membership and under the coming one. */
    NORMAL(ClusterView.Member.NORMAL),
    /** Receives the records of the keys it will replicate; a replica under the coming membership only. */
    JOINING(ClusterView.Member.JOINING),
    /** Hands its records over; a replica under the current membership only. */
    LEAVING(ClusterView.Member.LEAVING);

    private final String jsonName;

    MemberState(String jsonName) {
        this.jsonName = jsonName;
    }

    public String jsonName() {
        return jsonName;
    }

    /** @throws IllegalArgumentException for a state this version does not know */
    public static MemberState ofJson(String name) {
        for (MemberState s : values()) {
            if (s.jsonName.equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown member state '" + name + "'");
    }
}
