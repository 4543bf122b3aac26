package io.kvorum.node.metrics;

import io.kvorum.node.error.OverloadedException;
import io.kvorum.node.util.NodeThreads;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The meters of one node (docs/operations.md#metrics), and the only place their names and labels are written: the
 * components that record are handed the meters they need from here, resolved once, so that the
 * request path never looks a meter up by name. {@link #scrape} renders them all, with the JVM's and
 * the process's, in Prometheus' text format 0.0.4 for {@code GET /metrics}.
 *
 * <p>Labels are bounded: an operation, an HTTP status, a cluster member's id, an outcome, a
 * direction or a queue, never a key. Every family exists from the start: the meters of each
 * member given to the constructor, each operation with the statuses it answers, each outcome,
 * direction and queue are registered at zero before anything happens.
 *
 * <p>Thread-safe. Each node has its own registry, so several nodes in one JVM (tests) do not
 * share their counts. {@link #close} detaches the JVM binders that listen for garbage collections.
 */
public final class NodeMetrics implements AutoCloseable {

    /** A client operation, as label {@code op}. */
    public enum Op {
        GET(200, 404), PUT(201, 413), DELETE(202), RANGE(200), REPAIR(200);

        /** The statuses an operation answers besides 400, 503 and 504, the ones every operation may. */
        private final int[] ownStatuses;

        Op(int... ownStatuses) {
            this.ownStatuses = ownStatuses;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How a replica answered a request of this coordinator, as label {@code outcome}. */
    public enum ReplicaOutcome {
        /** It answered. */
        OK,
        /** No answer came within the deadline. */
        TIMEOUT,
        /** It could not be reached, was known down, or failed the request. */
        UNAVAILABLE,
        /** It refused the request because its storage queue was full. */
        OVERLOADED;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Why a digest read fetched a full record besides the one it asked for first, as label
     * {@code cause} of {@code kvorum_digest_read_fallbacks_total}.
     */
    public enum DigestFallback {
        /** A replica's digest named another version than the full record. */
        MISMATCH,
        /** The replica asked for the full record failed. */
        FAILED,
        /** The replica asked for the full record had not answered in a fraction of the request timeout. */
        SLOW;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Records moved by anti-entropy, as label {@code direction}. */
    public enum Direction {
        SENT, RECEIVED
    }

    /** A bounded storage queue, as label {@code queue}. */
    public enum StorageQueue {
        WRITE, READ
    }

    /** The anti-entropy round outcomes besides {@code ok}: {@code RepairException.Reason}'s, lower case. */
    public static final String ROUND_OK = "ok";

    /** The bucket bounds of {@code kvorum_request_duration_seconds}: 100 µs to 10 s, about three per decade. */
    static final Duration[] LATENCY_BUCKETS = {
        micros(100), micros(250), micros(500), millis(1), micros(2_500), millis(5), millis(10), millis(25),
        millis(50), millis(100), millis(250), millis(500), millis(1_000), millis(2_500), millis(5_000),
        millis(10_000)};

    /** The statuses of a request that every operation may answer: bad request, overloaded, not enough replicas. */
    private static final int[] COMMON_STATUSES = {400, 503, 504};
    private static final int MAX_STATUS = 599;
    /** Scrapes that may wait for the one in progress; Prometheus sends one per interval. */
    private static final int SCRAPES_WAITING = 4;
    private static final DoubleSupplier ZERO = () -> 0;
    private static final DoubleSupplier UNKNOWN = () -> Double.NaN;

    /** The content type of {@link #scrape}'s text. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /**
     * Keeps {@code promtool check metrics} quiet about the binders' names, and the names within
     * docs/operations.md#metrics ({@code kvorum_*}, {@code jvm_*}, {@code process_*}): drops {@code process_cpu_time_ns_total}
     * (an abbreviated unit; {@code process_cpu_usage} stays) and moves the machine's
     * {@code system_*} gauges to {@code kvorum_host_*}; {@code system_cpu_count}, a gauge with a
     * {@code _count} suffix, becomes {@code kvorum_host_cpu_cores}.
     */
    private static final MeterFilter PROMTOOL_CLEAN = new MeterFilter() {
        @Override
        public MeterFilterReply accept(Meter.Id id) {
            return id.getName().equals("process.cpu.time") ? MeterFilterReply.DENY : MeterFilterReply.NEUTRAL;
        }

        @Override
        public Meter.Id map(Meter.Id id) {
            String name = id.getName();
            if (name.equals("system.cpu.count")) {
                return id.withName("kvorum.host.cpu.cores");
            }
            return name.startsWith("system.") ? id.withName("kvorum.host." + name.substring("system.".length())) : id;
        }
    };

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final ExecutorService scraper = NodeThreads.bounded("metrics-scrape", 1, SCRAPES_WAITING);
    private final Set<String> roundOutcomes;

    /** Requests by operation and status: preregistered statuses in the array, any other (bounded by 599) in the map. */
    private final Counter[][] requests = new Counter[Op.values().length][MAX_STATUS + 1];
    private final Map<Integer, Counter> otherRequests = new ConcurrentHashMap<>();
    private final Timer[] durations = new Timer[Op.values().length];

    private final Set<String> registeredMembers = ConcurrentHashMap.newKeySet();
    private final Map<String, ReplicaCounters> replicas = new ConcurrentHashMap<>();
    private final Map<String, Counter> hintsDelivered = new ConcurrentHashMap<>();
    private final Map<String, Counter> hintsDropped = new ConcurrentHashMap<>();
    /** What {@code kvorum_peer_up} and {@code kvorum_hints_pending} read, by member, once bound; 0 before. */
    private final Map<String, DoubleSupplier> peerUp = new ConcurrentHashMap<>();
    private final Map<String, DoubleSupplier> clockOffsets = new ConcurrentHashMap<>();
    private final Map<String, DoubleSupplier> peerPhi = new ConcurrentHashMap<>();
    private final Map<String, Counter> peerSuspicions = new ConcurrentHashMap<>();
    private volatile BooleanSupplier clockWritesRefused = () -> false;
    private volatile LongSupplier tombstonesPurged = () -> 0;
    private volatile LongSupplier refusedPeerTimestamps = () -> 0;
    private volatile BooleanSupplier rebuilding = () -> false;
    private final Counter rebuildRecords;
    private final Map<String, DoubleSupplier> hintsPendingSources = new ConcurrentHashMap<>();
    private final Map<String, Gauge> hintsPending = new ConcurrentHashMap<>();
    private final Map<String, Map<String, Counter>> rounds = new ConcurrentHashMap<>();
    private final Map<Direction, Counter> antiEntropyRecords = new EnumMap<>(Direction.class);
    private final Counter readRepairs;
    private final Map<DigestFallback, Counter> digestFallbacks = new EnumMap<>(DigestFallback.class);
    private final Counter digestHedgesWithheld;
    private final Counter storageRejected;
    private final Counter storageLowDiskRejected;
    private final Map<StorageQueue, Counter> storageExpired = new EnumMap<>(StorageQueue.class);
    private final Map<StorageQueue, Counter> storageInline = new EnumMap<>(StorageQueue.class);
    private final Timer backupDuration;
    private final Counter backupRecords;
    private final Counter backupBytes;
    private final Counter backupFailures;
    private final AtomicLong backupLastSuccess = new AtomicLong();

    /**
     * Registers every family, with a series for each of {@code members} where a family is labelled
     * by peer, this node's own id among them, so that every node shows the same series: the
     * coordinator counts what it sends to its own replica too, this node is always up to itself, and
     * it never has hints for itself. A peer's {@code kvorum_peer_up} and {@code kvorum_hints_pending}
     * read 0 until their source is bound ({@link #bindPeerUp}, {@link #bindHintsPending}).
     *
     * @param self          this node's id, one of {@code members}
     * @param roundOutcomes the outcomes an anti-entropy round may end with, besides {@link #ROUND_OK}
     */
    public NodeMetrics(String self, Collection<String> members, Collection<String> roundOutcomes) {
        this(members, roundOutcomes, true);
        bindPeerUp(self, () -> true);
        bindClockOffset(self, () -> 0);
        bindPeerPhi(self, () -> 0);
    }

    private NodeMetrics(Collection<String> members, Collection<String> roundOutcomes, boolean jvm) {
        registry.config().meterFilter(PROMTOOL_CLEAN); // before any meter, as Micrometer requires
        this.roundOutcomes = new TreeSet<>(roundOutcomes);
        this.roundOutcomes.add(ROUND_OK);
        for (Op op : Op.values()) {
            durations[op.ordinal()] = Timer.builder("kvorum.request.duration")
                    .description("Latency of the client requests this node answered as coordinator, by operation")
                    .tag("op", op.label())
                    .serviceLevelObjectives(LATENCY_BUCKETS)
                    .register(registry);
            for (int status : COMMON_STATUSES) {
                requests[op.ordinal()][status] = requestCounter(op, status);
            }
            for (int status : op.ownStatuses) {
                requests[op.ordinal()][status] = requestCounter(op, status);
            }
        }
        readRepairs = Counter.builder("kvorum.read.repairs")
                .description("Records sent to stale replicas by reads").register(registry);
        for (DigestFallback cause : DigestFallback.values()) {
            digestFallbacks.put(cause, Counter.builder("kvorum.digest.read.fallbacks")
                    .description("Reads that fetched a full record from another replica than the first asked, by cause")
                    .tag("cause", cause.label()).register(registry));
        }
        rebuildRecords = Counter.builder("kvorum.rebuild.records")
                .description("Records this node took from its peers while rebuilding its copies after it lost its data")
                .register(registry);
        digestHedgesWithheld = Counter.builder("kvorum.digest.read.hedges.withheld")
                .description("Reads whose slow replica was not hedged with a second record fetch: the hedge budget, a tenth of the reads, was spent")
                .register(registry);
        storageRejected = Counter.builder("kvorum.storage.rejected")
                .description("Requests refused with 503 for overload: storage reads and writes whose queue was full or late, and large writes their coordinator did not admit")
                .register(registry);
        for (StorageQueue queue : StorageQueue.values()) {
            storageExpired.put(queue, Counter.builder("kvorum.storage.expired")
                    .description("Storage reads and writes dropped without effect: they waited in their queue longer than --request-timeout")
                    .tag("queue", queue.name().toLowerCase(Locale.ROOT))
                    .register(registry));
            storageInline.put(queue, Counter.builder("kvorum.storage.inline")
                    .description("Storage reads and writes run on the thread that asked for them, as their storage threads had nothing to do")
                    .tag("queue", queue.name().toLowerCase(Locale.ROOT))
                    .register(registry));
        }
        storageLowDiskRejected = Counter.builder("kvorum.storage.low.disk.rejected")
                .description("Storage writes refused because the data disk was at --min-free-disk (answered 503)")
                .register(registry);
        for (String db : List.of("records", "hints")) {
            storageErrors(db, "read");
            storageErrors(db, "write");
        }
        for (Direction d : Direction.values()) {
            antiEntropyRecords.put(d, Counter.builder("kvorum.anti.entropy.records")
                    .description("Records anti-entropy sent to peers or received from them")
                    .tag("direction", d.name().toLowerCase(Locale.ROOT)).register(registry));
        }
        backupDuration = Timer.builder("kvorum.backup.duration")
                .description("How long this node took to write its part of each backup that it completed").register(registry);
        backupRecords = Counter.builder("kvorum.backup.records")
                .description("Records this node wrote into backups").register(registry);
        backupBytes = Counter.builder("kvorum.backup.bytes")
                .description("Bytes of backup files this node wrote (compressed)").register(registry);
        backupFailures = Counter.builder("kvorum.backup.failures")
                .description("This node's parts of backups that failed (an error, a cancel, or a stop mid-way)").register(registry);
        gauge("kvorum.backup.last.success.timestamp.seconds", "When this node last completed its part of a backup, in "
                + "Unix seconds; 0 before the first since it started", Tags.empty(), backupLastSuccess::get);
        gauge("kvorum.clock.writes.refused", "1 while this node refuses writes because its wall clock is off from most"
                + " of its peers' by more than --max-clock-offset, else 0", Tags.empty(),
                () -> clockWritesRefused.getAsBoolean() ? 1 : 0);
        gauge("kvorum.rebuilding", "1 while this node rebuilds its copies after it lost its data (or checks whether it"
                + " must), refusing reads as a replica, else 0", Tags.empty(), () -> rebuilding.getAsBoolean() ? 1 : 0);
        members.forEach(this::registerMember);
        if (!jvm) {
            return;
        }
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
    }

    /**
     * Metrics for a component used on its own (tests, tools): no member registered up front, so
     * meters appear as they are used, and no JVM binders, so there is nothing to close.
     */
    public static NodeMetrics unregistered() {
        return new NodeMetrics(Set.of(), Set.of(), false);
    }

    private void registerMember(String member) {
        if (!registeredMembers.add(member)) {
            return; // registering a gauge again would only be ignored, with a warning
        }
        gauge("kvorum.peer.up", "1 while this node can reach the peer, else 0", Tags.of("peer", member),
                () -> peerUp.getOrDefault(member, ZERO).getAsDouble());
        gauge("kvorum.clock.offset.seconds", "The peer's wall clock minus this node's, as heartbeats last measured it"
                        + " (NaN until measured, or once the peer stopped answering)", Tags.of("peer", member),
                () -> clockOffsets.getOrDefault(member, UNKNOWN).getAsDouble());
        gauge("kvorum.peer.phi", "How unlikely the peer's silence since its last answer is, as -log10 of the chance"
                        + " that it is merely late (phi accrual; suspected at --phi-convict-threshold; NaN until it answered)",
                Tags.of("peer", member), () -> peerPhi.getOrDefault(member, UNKNOWN).getAsDouble());
        peerSuspicions(member);
        hintsPending(member);
        replicas(member);
        hintsDelivered(member);
        hintsDropped(member);
        for (String outcome : roundOutcomes) {
            antiEntropyRound(member, outcome);
        }
    }

    // ---- the HTTP gateway ----

    /** Counts a client request answered with {@code status} after {@code nanos}. */
    public void requestAnswered(Op op, int status, long nanos) {
        Counter c = status >= 0 && status <= MAX_STATUS ? requests[op.ordinal()][status] : null;
        if (c == null) {
            int bounded = Math.max(0, Math.min(status, MAX_STATUS));
            c = otherRequests.computeIfAbsent(op.ordinal() * 1000 + bounded, k -> requestCounter(op, bounded));
        }
        c.increment();
        durations[op.ordinal()].record(nanos, TimeUnit.NANOSECONDS);
    }

    private Counter requestCounter(Op op, int status) {
        return Counter.builder("kvorum.requests")
                .description("Client requests this node answered as coordinator, by operation and HTTP status")
                .tags("op", op.label(), "code", Integer.toString(status)).register(registry);
    }

    /**
     * Reports the gateway's client connections: those served now, the most it serves at once
     * ({@code --max-connections}, as the open-file limit left it), and those refused since the start.
     */
    public void bindHttpConnections(DoubleSupplier open, int limit, DoubleSupplier refused) {
        gauge("kvorum.http.connections", "Client HTTP connections served now", Tags.empty(), open);
        gauge("kvorum.http.connections.limit", "Most client HTTP connections served at once", Tags.empty(),
                () -> limit);
        FunctionCounter.builder("kvorum.http.connections.refused", refused, DoubleSupplier::getAsDouble)
                .description("Client HTTP connections refused (answered 503 or closed) because the limit was reached")
                .register(registry);
    }

    /**
     * Reports the bytes of bodies the gateway holds over all its connections, and the most it holds
     * before it answers 503: {@code body} is "request" (bodies of requests not yet answered) or
     * "answer" (bodies of answers to GETs not yet sent).
     */
    public void bindHttpBodyBytes(String body, DoubleSupplier held, long limit) {
        Tags tags = Tags.of("body", body);
        gauge("kvorum.http.body.bytes", "Bytes of bodies held over all client HTTP connections", tags, held);
        gauge("kvorum.http.body.bytes.limit", "Most bytes of bodies held over all client HTTP connections", tags,
                () -> limit);
    }

    /** Reports the requests in progress over the gateway's connections. */
    public void bindRequestsInFlight(DoubleSupplier inFlight) {
        gauge("kvorum.http.requests.in.flight", "Client requests in progress over all HTTP connections", Tags.empty(),
                inFlight);
    }

    // ---- the coordinator ----

    /** The counters of requests sent to one replica, by outcome. */
    public ReplicaCounters replicas(String member) {
        return replicas.computeIfAbsent(member, m -> {
            Map<ReplicaOutcome, Counter> byOutcome = new EnumMap<>(ReplicaOutcome.class);
            for (ReplicaOutcome o : ReplicaOutcome.values()) {
                byOutcome.put(o, Counter.builder("kvorum.replica.requests")
                        .description("Requests this coordinator sent to each replica, by how the replica answered")
                        .tags("peer", m, "outcome", o.label()).register(registry));
            }
            return new ReplicaCounters(byOutcome);
        });
    }

    /** The requests a coordinator sent to one replica, by outcome. Thread-safe. */
    public static final class ReplicaCounters {
        private final Counter[] byOutcome = new Counter[ReplicaOutcome.values().length];

        private ReplicaCounters(Map<ReplicaOutcome, Counter> byOutcome) {
            byOutcome.forEach((o, c) -> this.byOutcome[o.ordinal()] = c);
        }

        public void answered(ReplicaOutcome outcome) {
            byOutcome[outcome.ordinal()].increment();
        }
    }

    public Counter readRepairs() {
        return readRepairs;
    }

    public Counter digestFallbacks(DigestFallback cause) {
        return digestFallbacks.get(cause);
    }

    public Counter digestHedgesWithheld() {
        return digestHedgesWithheld;
    }

    // ---- liveness ----

    /** Reports whether this node can reach {@code peer}: {@code up} is read at each scrape. */
    public void bindPeerUp(String peer, BooleanSupplier up) {
        registerMember(peer);
        peerUp.put(peer, () -> up.getAsBoolean() ? 1 : 0);
    }

    /** Reports {@code peer}'s phi ({@code kvorum_peer_phi}): read at each scrape. */
    public void bindPeerPhi(String peer, DoubleSupplier phi) {
        registerMember(peer);
        peerPhi.put(peer, phi);
    }

    /** Counts one suspicion of {@code peer} ({@code kvorum_peer_suspicions_total}). */
    public void peerSuspected(String peer) {
        peerSuspicions(peer).increment();
    }

    private Counter peerSuspicions(String peer) {
        return peerSuspicions.computeIfAbsent(peer, p -> Counter.builder("kvorum.peer.suspicions")
                .description("Times the peer was suspected down: no answer for longer than its phi threshold allows")
                .tag("peer", p).register(registry));
    }

    /**
     * Drops the gauges of a member that left or was removed ({@code kvorum_peer_up},
     * {@code kvorum_clock_offset_seconds}, {@code kvorum_peer_phi}, {@code kvorum_hints_pending}): a departed member's
     * {@code kvorum_peer_up} read 0 forever and kept a "peer down" alert firing. Its counters stay,
     * at their last counts, as a counter's series does. A member of that id that joins later is
     * registered anew.
     */
    public void forgetMember(String member) {
        registeredMembers.remove(member);
        peerUp.remove(member);
        clockOffsets.remove(member);
        peerPhi.remove(member);
        hintsPendingSources.remove(member);
        Gauge pending = hintsPending.remove(member);
        if (pending != null) {
            registry.remove(pending);
        }
        for (String name : List.of("kvorum.peer.up", "kvorum.clock.offset.seconds", "kvorum.peer.phi")) {
            Gauge g = registry.find(name).tag("peer", member).gauge();
            if (g != null) {
                registry.remove(g);
            }
        }
    }

    /** Reports how far {@code peer}'s wall clock is from this node's, in seconds: read at each scrape. */
    public void bindClockOffset(String peer, DoubleSupplier offsetSeconds) {
        registerMember(peer);
        clockOffsets.put(peer, offsetSeconds);
    }

    /** Reports whether this node refuses writes for its clock: read at each scrape. */
    public void bindClockWritesRefused(BooleanSupplier refused) {
        clockWritesRefused = refused;
    }

    /** Reports whether this node is rebuilding its copies (docs/operations.md#replacing-a-disk): read at each scrape. */
    public void bindRebuilding(BooleanSupplier rebuilding) {
        this.rebuilding = rebuilding;
    }

    /** {@code kvorum_rebuild_records_total}: records taken from peers while rebuilding. */
    public Counter rebuildRecords() {
        return rebuildRecords;
    }

    // ---- hinted handoff ----

    /** Reports the hints waiting for {@code peer}: {@code pending} is read at each scrape and by {@link #hintsPendingByPeer}. */
    public void bindHintsPending(String peer, DoubleSupplier pending) {
        hintsPending(peer);
        hintsPendingSources.put(peer, pending);
    }

    private Gauge hintsPending(String peer) {
        return hintsPending.computeIfAbsent(peer, p -> gauge("kvorum.hints.pending", "Hints waiting for the peer",
                Tags.of("peer", p), () -> hintsPendingSources.getOrDefault(p, ZERO).getAsDouble()));
    }

    public Counter hintsDelivered(String peer) {
        return hintsDelivered.computeIfAbsent(peer, p -> Counter.builder("kvorum.hints.delivered")
                .description("Hints delivered to the peer").tag("peer", p).register(registry));
    }

    public Counter hintsDropped(String peer) {
        return hintsDropped.computeIfAbsent(peer, p -> Counter.builder("kvorum.hints.dropped")
                .description("Hints dropped for the peer (over its bound, too old, or the queue full)")
                .tag("peer", p).register(registry));
    }

    /** The peers that have hints waiting, with how many, by peer id: {@code /v0/status}'s {@code hints.pending}. */
    public Map<String, Long> hintsPendingByPeer() {
        Map<String, Long> out = new TreeMap<>();
        hintsPending.forEach((peer, gauge) -> {
            long n = (long) gauge.value();
            if (n > 0) {
                out.put(peer, n);
            }
        });
        return out;
    }

    /** Hints delivered since this node started, to every peer. */
    public long hintsDeliveredTotal() {
        return sum(hintsDelivered);
    }

    /** Hints dropped since this node started, for every peer. */
    public long hintsDroppedTotal() {
        return sum(hintsDropped);
    }

    // ---- anti-entropy ----

    /** The rounds this node started with {@code peer} that ended with {@code outcome}. */
    public Counter antiEntropyRound(String peer, String outcome) {
        return rounds.computeIfAbsent(peer, p -> new ConcurrentHashMap<>()).computeIfAbsent(outcome, o ->
                Counter.builder("kvorum.anti.entropy.rounds")
                        .description("Anti-entropy rounds this node started, by peer and outcome")
                        .tags("peer", peer, "outcome", o).register(registry));
    }

    public Counter antiEntropyRecords(Direction direction) {
        return antiEntropyRecords.get(direction);
    }

    // ---- storage ----

    /** Reports the operations waiting in a storage queue: {@code depth} is read at each scrape. */
    public void bindStorageQueue(StorageQueue queue, DoubleSupplier depth) {
        gauge("kvorum.storage.queue.depth", "Operations waiting in a storage queue",
                Tags.of("queue", queue.name().toLowerCase(Locale.ROOT)), depth);
    }

    /** Reports about how many bytes the store takes on disk: {@code bytes} is read at each scrape. */
    public void bindStorageBytes(DoubleSupplier bytes) {
        gauge("kvorum.storage.bytes", "About how many bytes the store's tables take on disk (LevelDB's estimate)",
                Tags.empty(), bytes);
    }

    public Counter storageRejected() {
        return storageRejected;
    }

    public Counter storageExpired(StorageQueue queue) {
        return storageExpired.get(queue);
    }

    /** Reads or writes run on the thread that asked for them instead of a storage thread. */
    public Counter storageInline(StorageQueue queue) {
        return storageInline.get(queue);
    }

    public Counter storageLowDiskRejected() {
        return storageLowDiskRejected;
    }

    /**
     * Reads or writes (each mutation of a failed batch) of a LevelDB database that failed with an
     * error of its own (a corrupt table, an I/O error).
     *
     * @param db "records" or "hints"
     * @param op "read" or "write"
     */
    public Counter storageErrors(String db, String op) {
        return Counter.builder("kvorum.storage.errors")
                .description("Storage reads and writes that failed with an error of the store (a corrupt file, an I/O error)")
                .tags("db", db, "op", op).register(registry);
    }

    /** Reports the free bytes of the data directory's file system, as the node last read them. */
    public void bindDiskFree(DoubleSupplier bytes) {
        gauge("kvorum.storage.disk.free.bytes", "Free bytes of the data directory's file system, as last read (every 250 ms)",
                Tags.empty(), bytes);
    }

    /**
     * Reports the tombstone purge (docs/operations.md#tombstones-and-repair): tombstones past their
     * grace that the last whole pass kept because a replica of their key was not known to hold them,
     * and tombstones dropped since start.
     */
    public void bindTombstones(LongSupplier heldBack, LongSupplier purged) {
        gauge("kvorum.tombstones.held.back", "Tombstones past --tombstone-grace that the last purge pass kept: a replica "
                + "of their key is not known to hold them (no completed anti-entropy round with it since the delete)",
                Tags.empty(), heldBack::getAsLong);
        tombstonesPurged = purged; // the meter holds its source weakly; this object holds it
        FunctionCounter.builder("kvorum.tombstones.purged", this, m -> m.tombstonesPurged.getAsLong())
                .description("Tombstones dropped by the purge since start").register(registry);
    }

    /**
     * Counts the timestamps peers sent (in records or read answers) further ahead of this node's
     * clock than {@code --max-clock-offset}, which it did not adopt (docs/operations.md#clocks).
     */
    public void bindRefusedPeerTimestamps(LongSupplier refused) {
        refusedPeerTimestamps = refused; // the meter holds its source weakly; this object holds it
        FunctionCounter.builder("kvorum.clock.peer.timestamps.refused", this, m -> m.refusedPeerTimestamps.getAsLong())
                .description("Timestamps from peers further ahead of this node's clock than --max-clock-offset: "
                        + "their records refused, their read answers not followed").register(registry);
    }

    /** Reports when the certificate this node serves expires (Unix seconds), as last loaded: with TLS only. */
    public void bindTlsCertificateExpiry(DoubleSupplier epochSeconds) {
        gauge("kvorum.tls.certificate.expiry.timestamp.seconds",
                "When the certificate this node presents expires, in Unix seconds (renewing it needs no restart)",
                Tags.empty(), epochSeconds);
    }

    /** Records and bytes of backup files written (as they are written, so that a scrape shows progress). */
    public void backupWritten(long records, long bytes) {
        backupRecords.increment(records);
        backupBytes.increment(bytes);
    }

    /** This node completed its part of a backup in {@code nanos}, at {@code epochSeconds}. */
    public void backupDone(long nanos, long epochSeconds) {
        backupDuration.record(nanos, TimeUnit.NANOSECONDS);
        backupLastSuccess.set(epochSeconds);
    }

    /** This node's part of a backup failed. */
    public void backupFailed() {
        backupFailures.increment();
    }

    // ---- exposition ----

    /** Every meter, in Prometheus' text format 0.0.4 ({@link #CONTENT_TYPE}). */
    public String scrape() {
        return registry.scrape(CONTENT_TYPE);
    }

    /**
     * {@link #scrape} on this node's {@code metrics-scrape} thread: a scrape takes milliseconds
     * (the JVM binders ask the JVM about every thread, pool and collector), which must not stall
     * the client requests of an HTTP event loop. A few scrapes may wait; more fail at once with
     * an {@link OverloadedException} (a 503).
     */
    public CompletableFuture<String> scrapeAsync() {
        try {
            return CompletableFuture.supplyAsync(this::scrape, scraper);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new OverloadedException("too many scrapes of /metrics at once"));
        }
    }

    @Override
    public void close() {
        gc.close();
        scraper.shutdownNow();
    }

    private Gauge gauge(String name, String description, Tags tags, DoubleSupplier value) {
        return Gauge.builder(name, value::getAsDouble).description(description).tags(tags).strongReference(true)
                .register(registry);
    }

    private static long sum(Map<String, Counter> counters) {
        double total = 0;
        for (Counter c : counters.values()) {
            total += c.count();
        }
        return (long) total;
    }

    private static Duration micros(long n) {
        return Duration.ofNanos(n * 1_000);
    }

    private static Duration millis(long n) {
        return Duration.ofMillis(n);
    }
}
