package io.kvorum.node.config;

import io.kvorum.node.cluster.ClusterIdentity;
import io.kvorum.node.cluster.ClusterMember;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipStore;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.security.BearerTokens;
import io.kvorum.node.security.Security;
import io.kvorum.node.security.LiveTls;
import io.kvorum.node.security.TlsFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A node's validated configuration, built from raw option strings (flags over environment over
 * the defaults of {@link NodeOption}). Every derived default is resolved here, once.
 *
 * @param given the options given as a flag or a variable, not defaulted: where a stored value wins
 *              over an option, only a given option can be said to differ from it
 */
public record NodeConfig(
        String clusterName,
        String clusterIdentity,
        Topology topology,
        ClusterMember self,
        Path dataDir,
        Path backupDir,
        String bindAddress,
        int replicationFactor,
        boolean fsync,
        boolean join,
        Duration antiEntropyInterval,
        long antiEntropyRate,
        long antiEntropyBandwidth,
        Duration requestTimeout,
        int maxValueBytes,
        long minFreeDisk,
        int storageQueue,
        int storageReaders,
        int maxConnections,
        int httpThreads,
        int warmUpRequests,
        Duration purgeInterval,
        Duration tombstoneGrace,
        long hintMaxBytesPerPeer,
        Duration hintMaxAge,
        Duration maxClockOffset,
        double phiConvictThreshold,
        Security security,
        Tuning tuning,
        Set<NodeOption> given) {

    /** The least {@code --min-free-disk} but 0: room for LevelDB's largest compaction (256 MiB). */
    public static final long LEAST_MIN_FREE_DISK = 256L << 20;

    /** Whether writes a peer missed are kept and delivered later (docs/operations.md#how-replicas-converge): off with {@code --hint-max-age 0}. */
    public boolean hintedHandoff() {
        return !hintMaxAge.isZero();
    }

    /** {@code <data-dir>/../backups}: beside the data dirs of the nodes of one machine, shared by them. */
    static Path defaultBackupDir(Path dataDir) {
        Path parent = dataDir.toAbsolutePath().normalize().getParent();
        return (parent != null ? parent : dataDir.toAbsolutePath()).resolve("backups");
    }

    /** This configuration with another backup dir (tests). */
    public NodeConfig withBackupDir(Path other) {
        return new NodeConfig(clusterName, clusterIdentity, topology, self, dataDir, other, bindAddress, replicationFactor, fsync, join, antiEntropyInterval,
                antiEntropyRate, antiEntropyBandwidth, requestTimeout, maxValueBytes, minFreeDisk, storageQueue, storageReaders, maxConnections, httpThreads, warmUpRequests, purgeInterval,
                tombstoneGrace, hintMaxBytesPerPeer, hintMaxAge, maxClockOffset, phiConvictThreshold, security, tuning, given);
    }

    /** This configuration with other internal tuning (tests). */
    public NodeConfig withTuning(Tuning other) {
        return new NodeConfig(clusterName, clusterIdentity, topology, self, dataDir, backupDir, bindAddress, replicationFactor, fsync, join, antiEntropyInterval,
                antiEntropyRate, antiEntropyBandwidth, requestTimeout, maxValueBytes, minFreeDisk, storageQueue, storageReaders, maxConnections, httpThreads, warmUpRequests, purgeInterval,
                tombstoneGrace, hintMaxBytesPerPeer, hintMaxAge, maxClockOffset, phiConvictThreshold, security, other, given);
    }

    /** This configuration with other security settings (tests). */
    public NodeConfig withSecurity(Security other) {
        return new NodeConfig(clusterName, clusterIdentity, topology, self, dataDir, backupDir, bindAddress, replicationFactor, fsync, join, antiEntropyInterval,
                antiEntropyRate, antiEntropyBandwidth, requestTimeout, maxValueBytes, minFreeDisk, storageQueue, storageReaders, maxConnections, httpThreads, warmUpRequests, purgeInterval,
                tombstoneGrace, hintMaxBytesPerPeer, hintMaxAge, maxClockOffset, phiConvictThreshold, other, tuning, given);
    }

    /**
     * This configuration with the membership stored in the data dir, which wins over
     * {@code --cluster}, {@code --cluster-name} and {@code --replication-factor} after the first start
     * (docs/operations.md#growing-and-shrinking-a-cluster). The node's own entry comes from it too.
     *
     * @throws InvalidTopologyException when this node is not a member of it
     */
    public NodeConfig withMembership(Membership m) throws InvalidTopologyException {
        ClusterMember own = m.topology().member(self.id());
        if (own == null) {
            throw new InvalidTopologyException("node " + self.id() + " is not a member of the stored membership ("
                    + m.topology().members().stream().map(ClusterMember::id).toList() + ", epoch " + m.epoch()
                    + "): it left the cluster or was removed (or this data dir is another node's); to join again, "
                    + "empty its data dir and start it with --join");
        }
        return new NodeConfig(m.clusterName(), m.identity(), m.topology(), own, dataDir, backupDir,
                bindAddress.equals(self.host()) ? own.host() : bindAddress, m.replicationFactor(), fsync, join,
                antiEntropyInterval, antiEntropyRate, antiEntropyBandwidth, requestTimeout, maxValueBytes, minFreeDisk, storageQueue,
                storageReaders, maxConnections, httpThreads, warmUpRequests, purgeInterval, tombstoneGrace, hintMaxBytesPerPeer, hintMaxAge, maxClockOffset,
                phiConvictThreshold, security, tuning, given);
    }

    /** The membership {@code --cluster} seeds on a node's first start. */
    public Membership seedMembership() {
        return Membership.first(clusterName, topology, replicationFactor);
    }

    /** {@link #seedMembership()}, with which of the options that make it were given rather than defaulted. */
    public MembershipStore.Seed seed() {
        return new MembershipStore.Seed(seedMembership(), given.contains(NodeOption.CLUSTER),
                given.contains(NodeOption.CLUSTER_NAME), given.contains(NodeOption.REPLICATION_FACTOR));
    }

    /** The configuration of a node started with no options at all. */
    public static NodeConfig defaults() {
        try {
            return fromRaw(Map.of());
        } catch (ConfigException e) {
            throw new IllegalStateException("the built-in defaults are invalid", e);
        }
    }

    /** Validates raw values given as flags; see {@link #fromRaw(Map, Set)}. */
    public static NodeConfig fromRaw(Map<NodeOption, String> given) throws ConfigException {
        return fromRaw(given, Set.of());
    }

    /**
     * Validates raw values. An absent or null entry takes the option's default.
     *
     * @param fromEnvironment the options whose value came from a {@code KVORUM_*} variable, so that
     *                        an error names the variable rather than the flag
     * @throws ConfigException with a one-line message naming the option
     */
    public static NodeConfig fromRaw(Map<NodeOption, String> given, Set<NodeOption> fromEnvironment)
            throws ConfigException {
        return new Parser(given, fromEnvironment).parse();
    }

    /** One validation pass over raw values. */
    private static final class Parser {
        private final Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        private final Set<NodeOption> given = EnumSet.noneOf(NodeOption.class);
        private final Set<NodeOption> fromEnvironment;

        Parser(Map<NodeOption, String> values, Set<NodeOption> fromEnvironment) {
            for (NodeOption o : NodeOption.values()) {
                String v = values.get(o);
                raw.put(o, v != null ? v : o.defaultValue());
                if (v != null) {
                    given.add(o);
                }
            }
            this.fromEnvironment = fromEnvironment;
        }

        NodeConfig parse() throws ConfigException {
            Topology topology;
            try {
                topology = Topology.parse(raw.get(NodeOption.CLUSTER));
            } catch (InvalidTopologyException e) {
                throw renamed(NodeOption.CLUSTER, new ConfigException(e.getMessage()));
            }
            String nodeId = raw.get(NodeOption.NODE_ID);
            ClusterMember self;
            if (nodeId == null) {
                if (topology.size() != 1) {
                    throw new ConfigException(name(NodeOption.NODE_ID) + " is required when "
                            + name(NodeOption.CLUSTER) + " has " + topology.size() + " nodes");
                }
                self = topology.members().get(0);
            } else {
                self = topology.member(nodeId);
                if (self == null) {
                    throw new ConfigException(name(NodeOption.NODE_ID) + " '" + nodeId + "' is not in "
                            + name(NodeOption.CLUSTER));
                }
            }
            String dataDir = raw.get(NodeOption.DATA_DIR);
            if (dataDir != null && dataDir.isBlank()) {
                throw new ConfigException(name(NodeOption.DATA_DIR) + " is empty");
            }
            String backupDir = raw.get(NodeOption.BACKUP_DIR);
            if (backupDir != null && backupDir.isBlank()) {
                throw new ConfigException(name(NodeOption.BACKUP_DIR) + " is empty");
            }
            Path data = Path.of(dataDir != null ? dataDir : "./data/" + self.id());
            String bind = raw.get(NodeOption.BIND);
            if (bind != null && bind.isBlank()) {
                throw new ConfigException(name(NodeOption.BIND) + " is empty");
            }
            if (bind != null && !Topology.isHost(bind.startsWith("[") && bind.endsWith("]")
                    ? bind.substring(1, bind.length() - 1) : bind)) {
                throw new ConfigException(name(NodeOption.BIND) + " '" + bind + "' is not a host name or IP address");
            }
            // A joining node takes the replication factor from the cluster it joins (docs/operations.md#growing-and-shrinking-a-cluster).
            int rf = raw.get(NodeOption.REPLICATION_FACTOR) == null || bool(NodeOption.JOIN)
                    ? topology.size()
                    : intIn(NodeOption.REPLICATION_FACTOR, 1, topology.size());
            String clusterName = raw.get(NodeOption.CLUSTER_NAME).trim();
            if (!Membership.isClusterName(clusterName)) {
                throw new ConfigException(name(NodeOption.CLUSTER_NAME) + " '" + clusterName
                        + "' is not a cluster name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
            }
            Duration tombstoneGrace = millis(NodeOption.TOMBSTONE_GRACE, 1);
            Duration hintMaxAge = millis(NodeOption.HINT_MAX_AGE, 0);
            // A hint outliving the grace would be delivered after the tombstones of its key may be
            // purged everywhere: it would write back a value that was deleted (docs/operations.md).
            if (!hintMaxAge.isZero() && hintMaxAge.compareTo(tombstoneGrace) >= 0) {
                throw new ConfigException(name(NodeOption.HINT_MAX_AGE) + " (" + hintMaxAge.toMillis()
                        + " ms) must be below " + name(NodeOption.TOMBSTONE_GRACE) + " (" + tombstoneGrace.toMillis()
                        + " ms): a hint delivered after a delete's tombstone is purged brings the deleted value back; "
                        + "lower " + name(NodeOption.HINT_MAX_AGE) + " or turn hinted handoff off with 0");
            }
            return new NodeConfig(
                    clusterName,
                    ClusterIdentity.of(clusterName, topology, rf),
                    topology,
                    self,
                    data,
                    backupDir != null ? Path.of(backupDir) : defaultBackupDir(data),
                    bind != null ? bind : self.host(),
                    rf,
                    bool(NodeOption.FSYNC),
                    bool(NodeOption.JOIN),
                    millis(NodeOption.ANTI_ENTROPY_INTERVAL, 0),
                    longIn(NodeOption.ANTI_ENTROPY_RATE, 1, 1_000_000_000),
                    longIn(NodeOption.ANTI_ENTROPY_BANDWIDTH, 1024, Long.MAX_VALUE),
                    millis(NodeOption.REQUEST_TIMEOUT, 1),
                    intIn(NodeOption.MAX_VALUE_BYTES, 0, Integer.MAX_VALUE - 1024),
                    minFreeDisk(),
                    intIn(NodeOption.STORAGE_QUEUE, 1, 1 << 20),
                    intIn(NodeOption.STORAGE_READERS, 1, 256),
                    intIn(NodeOption.MAX_CONNECTIONS, 1, 10_000_000),
                    intIn(NodeOption.HTTP_THREADS, 0, 256),
                    intIn(NodeOption.WARM_UP, 0, 1_000_000),
                    millis(NodeOption.PURGE_INTERVAL, 1),
                    tombstoneGrace,
                    longIn(NodeOption.HINT_MAX_BYTES_PER_PEER, 0, Long.MAX_VALUE),
                    hintMaxAge,
                    millis(NodeOption.MAX_CLOCK_OFFSET, 0),
                    positiveDouble(NodeOption.PHI_CONVICT_THRESHOLD),
                    security(),
                    Tuning.DEFAULTS,
                    Set.copyOf(given));
        }

        /** docs/operations.md#security: the three TLS files together or none, each readable and parsable; a token file with a token. */
        private Security security() throws ConfigException {
            List<NodeOption> tlsOptions = List.of(NodeOption.TLS_CERT, NodeOption.TLS_KEY, NodeOption.TLS_CA);
            List<NodeOption> tlsGiven = tlsOptions.stream().filter(o -> raw.get(o) != null).toList();
            LiveTls tls = null;
            if (!tlsGiven.isEmpty() && tlsGiven.size() < tlsOptions.size()) {
                List<String> missing = tlsOptions.stream().filter(o -> raw.get(o) == null).map(this::name).toList();
                throw new ConfigException(String.join(" and ", missing) + " must be given with "
                        + String.join(" and ", tlsGiven.stream().map(this::name).toList())
                        + ": TLS needs a certificate, its key and the CA");
            }
            if (!tlsGiven.isEmpty()) {
                try {
                    tls = LiveTls.open(new TlsFiles(file(NodeOption.TLS_CERT), file(NodeOption.TLS_KEY), file(NodeOption.TLS_CA)));
                } catch (TlsFiles.InvalidTlsFileException e) {
                    NodeOption culprit = switch (e.role()) {
                        case CERTIFICATE -> NodeOption.TLS_CERT;
                        case KEY -> NodeOption.TLS_KEY;
                        case AUTHORITY -> NodeOption.TLS_CA;
                    };
                    throw new ConfigException(name(culprit) + " '" + e.file() + "' " + e.getMessage());
                }
            }
            Path tokenFile = null;
            if (raw.get(NodeOption.AUTH_TOKEN_FILE) != null) {
                tokenFile = file(NodeOption.AUTH_TOKEN_FILE);
                try {
                    BearerTokens.validate(tokenFile);
                } catch (BearerTokens.InvalidTokenFileException e) {
                    throw new ConfigException(name(NodeOption.AUTH_TOKEN_FILE) + " '" + tokenFile + "' " + e.getMessage());
                }
            }
            return new Security(tls, tokenFile);
        }

        private Path file(NodeOption o) throws ConfigException {
            String v = raw.get(o);
            if (v.isBlank()) {
                throw new ConfigException(name(o) + " is empty");
            }
            return Path.of(v);
        }

        private String name(NodeOption o) {
            return fromEnvironment.contains(o) ? o.envVar() : o.flag();
        }

        private ConfigException renamed(NodeOption o, ConfigException e) {
            return fromEnvironment.contains(o)
                    ? new ConfigException(e.getMessage().replace(o.flag(), o.envVar()))
                    : e;
        }

        private int intIn(NodeOption o, int min, int max) throws ConfigException {
            return (int) longIn(o, min, max);
        }

        /**
         * 0 (no check) or at least {@link #LEAST_MIN_FREE_DISK}: a smaller reserve does not cover one
         * LevelDB compaction, and a compaction that fills the disk crashes the process (SIGBUS).
         */
        private long minFreeDisk() throws ConfigException {
            long v = longValue(NodeOption.MIN_FREE_DISK);
            if (v != 0 && v < LEAST_MIN_FREE_DISK) {
                throw new ConfigException(name(NodeOption.MIN_FREE_DISK) + " must be 0 (no check) or at least "
                        + LEAST_MIN_FREE_DISK + " (256 MiB: LevelDB's compactions write up to about 200 MiB before they"
                        + " free anything, and a disk they fill crashes the node), got " + v);
            }
            return v;
        }

        private long longIn(NodeOption o, long min, long max) throws ConfigException {
            long v = longValue(o);
            if (v < min || v > max) {
                throw new ConfigException(name(o) + " must be between " + min + " and " + max + ", got " + v);
            }
            return v;
        }

        private Duration millis(NodeOption o, long min) throws ConfigException {
            long v = longValue(o);
            if (v < min) {
                throw new ConfigException(name(o) + " must be at least " + min + " ms, got " + v);
            }
            return Duration.ofMillis(v);
        }

        /** A number above 0 and finite, decimals allowed. */
        private double positiveDouble(NodeOption o) throws ConfigException {
            String s = raw.get(o);
            double v;
            try {
                v = Double.parseDouble(s.trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(name(o) + " expects a number, got '" + s + "'");
            }
            if (!(v > 0) || Double.isInfinite(v)) {
                throw new ConfigException(name(o) + " must be a number above 0, got " + s.trim());
            }
            return v;
        }

        private long longValue(NodeOption o) throws ConfigException {
            String s = raw.get(o);
            try {
                return Long.parseLong(s.trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(name(o) + " expects a whole number, got '" + s + "'");
            }
        }

        private boolean bool(NodeOption o) throws ConfigException {
            String s = raw.get(o).trim().toLowerCase(Locale.ROOT);
            return switch (s) {
                case "true" -> true;
                case "false" -> false;
                default -> throw new ConfigException(name(o) + " expects true or false, got '" + raw.get(o) + "'");
            };
        }
    }
}
