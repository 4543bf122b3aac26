package io.kvorum.perf.metrics;

import java.util.Set;
import java.util.TreeSet;

/**
 * The metric families a node exposes on {@code GET /metrics}, by name: the single list that the
 * perf report, the Grafana dashboard's check and (after a scrape of a real node) the fixture
 * {@code ops/grafana/exported-families.txt} are held to.
 *
 * <p>Counters are named with their {@code _total}; a histogram or timer by its base name, whose
 * samples are {@code _bucket}, {@code _count}, {@code _sum} (and {@code _max} for Micrometer's timers).
 */
public final class MetricFamilies {

    public static final String REQUESTS = "kvorum_requests_total";
    public static final String REQUEST_DURATION = "kvorum_request_duration_seconds";
    public static final String REPLICA_REQUESTS = "kvorum_replica_requests_total";
    public static final String PEER_UP = "kvorum_peer_up";
    public static final String HINTS_PENDING = "kvorum_hints_pending";
    public static final String HINTS_DELIVERED = "kvorum_hints_delivered_total";
    public static final String HINTS_DROPPED = "kvorum_hints_dropped_total";
    public static final String READ_REPAIRS = "kvorum_read_repairs_total";
    public static final String ANTI_ENTROPY_ROUNDS = "kvorum_anti_entropy_rounds_total";
    public static final String ANTI_ENTROPY_RECORDS = "kvorum_anti_entropy_records_total";
    public static final String STORAGE_QUEUE_DEPTH = "kvorum_storage_queue_depth";
    public static final String STORAGE_REJECTED = "kvorum_storage_rejected_total";

    public static final String JVM_GC_PAUSE = "jvm_gc_pause_seconds";

    /** docs/operations.md#metrics's table: every family a node must expose from its start. */
    public static final Set<String> SPEC = Set.of(REQUESTS, REQUEST_DURATION, REPLICA_REQUESTS, PEER_UP, HINTS_PENDING,
            HINTS_DELIVERED, HINTS_DROPPED, READ_REPAIRS, ANTI_ENTROPY_ROUNDS, ANTI_ENTROPY_RECORDS, STORAGE_QUEUE_DEPTH,
            STORAGE_REJECTED);

    /** The JVM and process families of Micrometer's binders that Kvorum's report and dashboard read. */
    public static final Set<String> JVM = Set.of("jvm_memory_used_bytes", "jvm_memory_max_bytes", JVM_GC_PAUSE,
            "jvm_threads_live_threads", "process_cpu_usage", "kvorum_host_cpu_usage", "process_uptime_seconds");

    /** Families exposed as several samples with a suffix (histograms, summaries, timers). */
    public static final Set<String> HISTOGRAMS = Set.of(REQUEST_DURATION, JVM_GC_PAUSE, "kvorum_backup_duration_seconds");

    /** The suffixes of a histogram's or timer's samples. */
    public static final Set<String> HISTOGRAM_SUFFIXES = Set.of("_bucket", "_count", "_sum", "_max");

    private MetricFamilies() {}

    /** {@link #SPEC} and {@link #JVM} together, sorted. */
    public static Set<String> known() {
        Set<String> all = new TreeSet<>(SPEC);
        all.addAll(JVM);
        return all;
    }

    /**
     * The family a sample name belongs to, given the families known: {@code name} itself when it
     * is one, else {@code name} without a histogram suffix when that is one of {@code families}
     * and of {@link #HISTOGRAMS} (so a counter's {@code _count} is not taken for a histogram's),
     * else {@code name} unchanged (an unknown family).
     */
    public static String familyOf(String sampleName, Set<String> families) {
        if (families.contains(sampleName)) {
            return sampleName;
        }
        for (String suffix : HISTOGRAM_SUFFIXES) {
            if (sampleName.endsWith(suffix)) {
                String base = sampleName.substring(0, sampleName.length() - suffix.length());
                if (families.contains(base) && HISTOGRAMS.contains(base)) {
                    return base;
                }
            }
        }
        return sampleName;
    }
}
