package io.kvorum.perf.peers;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The systems {@code perf peers} measures, by the name {@code --systems} takes. */
public enum PeerSystem {

    KVORUM("kvorum", "Kvorum",
            "the node's quorum (2 of 3) acknowledges a write once it is in LevelDB's write-ahead log, not fsynced: "
                    + "a killed process loses nothing acknowledged, a power loss of every replica may lose the last writes"),
    KVORUM_FSYNC("kvorum-fsync", "Kvorum --fsync",
            "the node's quorum (2 of 3) acknowledges a write once its batch (up to 512 writes) is fsynced"),
    CASSANDRA("cassandra", "Cassandra 5.0",
            "QUORUM (2 of 3) acknowledges a write once it is in the commit log, which is fsynced every 10 s "
                    + "(commitlog_sync: periodic, Cassandra's default): a power loss of every replica may lose the last 10 s"),
    ETCD("etcd", "etcd 3.4",
            "a write is acknowledged once a majority (2 of 3) has fsynced it to its write-ahead log (Raft); "
                    + "reads are linearizable (the leader confirms its leadership first)");

    private final String option;
    private final String title;
    private final String durability;

    PeerSystem(String option, String title, String durability) {
        this.option = option;
        this.title = title;
        this.durability = durability;
    }

    /** The name {@code --systems} takes. */
    public String option() {
        return option;
    }

    /** The name in the report. */
    public String title() {
        return title;
    }

    /** What an acknowledged write survives, and what a read sees, for the report. */
    public String durability() {
        return durability;
    }

    /** The system {@code --systems} names. */
    public static PeerSystem of(String option) {
        String name = option.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(s -> s.option.equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("'" + option + "' is not a system: "
                        + Arrays.stream(values()).map(PeerSystem::option).collect(Collectors.joining(", "))));
    }
}
