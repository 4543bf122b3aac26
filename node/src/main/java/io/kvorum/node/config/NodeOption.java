package io.kvorum.node.config;

import java.util.Locale;

/**
 * The single table of node options: name, value label, default, and documentation. The
 * command-line flag ({@code --name}) and the environment variable ({@code KVORUM_NAME}) are both
 * derived from the name; {@link NodeConfig} holds the typed values. A default of {@code null}
 * means "derived from other options", described in the doc.
 *
 * <p>{@code docs/configuration.md} is this table; {@code NodeOptionTest} keeps the two equal.
 */
public enum NodeOption {
    CLUSTER("cluster", "ID=HOST:HTTP:GRPC[,...]", "n1=127.0.0.1:8080:9080",
            "The whole static topology, this node included."),
    CLUSTER_NAME("cluster-name", "NAME", "kvorum",
            "Part of the cluster's identity: nodes refuse traffic from a node of another cluster. "
                    + "Letters, digits, '.', '_' and '-', at most 64."),
    NODE_ID("node-id", "ID", null,
            "Which entry of --cluster this process is. Default: the only entry, if there is one."),
    DATA_DIR("data-dir", "DIR", null,
            "Where LevelDB, hints and other node state live. Default: ./data/<node-id>."),
    BACKUP_DIR("backup-dir", "DIR", null,
            "Where this node writes its part of a cluster backup (POST /v0/backup), in <id>/<node-id>/; may be a mounted "
                    + "volume. Default: <data-dir>/../backups."),
    BIND("bind", "ADDR", null,
            "Address to listen on. Default: the HOST of this node's own --cluster entry."),
    REPLICATION_FACTOR("replication-factor", "RF", null,
            "Default 'from' for requests that name none. Default: the number of nodes in --cluster."),
    FSYNC("fsync", null, "false",
            "Fsync every write before acknowledging it (power-loss durability)."),
    JOIN("join", null, "false",
            "This node is new: join the running cluster that --cluster names (its own entry and at least one "
                    + "member). Ignored once the node has a stored membership."),
    ANTI_ENTROPY_INTERVAL("anti-entropy-interval", "MS", "60000",
            "How often replicas compare Merkle trees, in milliseconds; 0 turns it off."),
    ANTI_ENTROPY_RATE("anti-entropy-rate", "N", "2000",
            "Most records a second anti-entropy reads to send to a peer, and a backup writes; paces repair and backups "
                    + "so that clients keep the machine (raise it to repair faster while clients are few)."),
    ANTI_ENTROPY_BANDWIDTH("anti-entropy-bandwidth", "N", "33554432",
            "Most bytes a second of records anti-entropy reads to send to a peer, and a backup writes (32 MiB)."),
    REQUEST_TIMEOUT("request-timeout", "MS", "1000",
            "How long a coordinator waits for replicas before answering 504, in milliseconds. Also how long a storage "
                    + "read or write may wait for its thread: past it, it is dropped without effect, and while the oldest "
                    + "waiting one is past half of it new ones are answered 503."),
    MAX_VALUE_BYTES("max-value-bytes", "N", "4194304",
            "Largest accepted request body, in bytes; larger bodies get 413."),
    MIN_FREE_DISK("min-free-disk", "N", "268435456",
            "Bytes kept free on the data directory's file system (256 MiB, also the least allowed): a write that would "
                    + "go below it is answered 503, so that LevelDB always has room for its logs and compactions; 0 turns "
                    + "the check off."),
    STORAGE_QUEUE("storage-queue", "N", "4096",
            "Capacity of each storage queue (reads, writes); when one is full the node answers 503."),
    STORAGE_READERS("storage-readers", "N", "2",
            "Threads serving storage reads and range scans."),
    MAX_CONNECTIONS("max-connections", "N", "10000",
            "Most client HTTP connections served at once; a connection past it is answered 503 and closed. "
                    + "Lowered at start, with a warning, to the process's open-file limit less 2560 kept for storage and peers."),
    HTTP_THREADS("http-threads", "N", "0",
            "Netty event-loop threads, shared by HTTP and the gRPC traffic between nodes; 0 means one per core."),
    WARM_UP("warm-up", "N", "3000",
            "Requests a starting node sends through a throwaway two-node copy of its request path (in its own JVM, "
                    + "on loopback ports, with its store in a folder of the data dir that is deleted afterwards) before it "
                    + "serves, so that its first clients meet compiled code; bounded by 30 s. 0 turns it off."),
    PURGE_INTERVAL("purge-interval", "MS", "60000",
            "How often expired values and old tombstones are purged from storage, in milliseconds."),
    TOMBSTONE_GRACE("tombstone-grace", "MS", "864000000",
            "How long a tombstone is kept at least before it may be purged (10 days); at least 1, and above "
                    + "--hint-max-age. It is purged only once every replica of its key is also known to hold it."),
    HINT_MAX_BYTES_PER_PEER("hint-max-bytes-per-peer", "N", "268435456",
            "Largest size of the hints a coordinator keeps for one unreachable peer (256 MiB); "
                    + "beyond it new hints are dropped and logged."),
    HINT_MAX_AGE("hint-max-age", "MS", "10800000",
            "How long a hint waits for its peer before it is dropped and logged (3 hours); "
                    + "must be below --tombstone-grace; 0 turns hinted handoff off."),
    MAX_CLOCK_OFFSET("max-clock-offset", "MS", "500",
            "Most a node's wall clock may differ from most of its peers' (measured by heartbeats) while it stamps writes; "
                    + "beyond it the node answers writes 503, as their timestamps would misorder them; 0 turns the check off."),
    PHI_CONVICT_THRESHOLD("phi-convict-threshold", "PHI", "8",
            "How sure a node must be that a silent peer is down before it suspects it (phi accrual, as in Cassandra): "
                    + "phi is -log10 of the chance that the peer is merely late, from the rhythm of its answers so far. "
                    + "Lower suspects sooner, higher tolerates longer pauses; above 0. A suspected peer is still sent requests."),
    TLS_CERT("tls-cert", "FILE", null,
            "PEM certificate of this node, for HTTPS and mutual TLS between nodes; needs --tls-key and --tls-ca. "
                    + "The three files are re-read when they change. Default: none (plain HTTP and gRPC)."),
    TLS_KEY("tls-key", "FILE", null,
            "PEM private key (PKCS#8) of --tls-cert. Default: none."),
    TLS_CA("tls-ca", "FILE", null,
            "PEM certificate of the CA that signs every node's certificate; peers must present one it signed. "
                    + "Default: none."),
    AUTH_TOKEN_FILE("auth-token-file", "FILE", null,
            "Bearer tokens that clients must present, one per line as TOKEN [ROLE [NAME]] (ROLE read, write "
                    + "or admin, the default); re-read when it changes. Default: none (no authentication).");

    private final String name;
    private final String valueLabel;
    private final String defaultValue;
    private final String doc;

    NodeOption(String name, String valueLabel, String defaultValue, String doc) {
        this.name = name;
        this.valueLabel = valueLabel;
        this.defaultValue = defaultValue;
        this.doc = doc;
    }

    /** The option's name, as in {@code --name}. */
    public String optionName() {
        return name;
    }

    public String flag() {
        return "--" + name;
    }

    /** {@code KVORUM_} followed by the name in upper snake case. */
    public String envVar() {
        return "KVORUM_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** True for an on/off switch that takes no value on the command line. */
    public boolean isSwitch() {
        return valueLabel == null;
    }

    public String valueLabel() {
        return valueLabel;
    }

    /** The literal default, or null when it is derived from other options. */
    public String defaultValue() {
        return defaultValue;
    }

    public String doc() {
        return doc;
    }
}
