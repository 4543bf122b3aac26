package io.kvorum.perf;

import io.kvorum.perf.load.LoadSpec;
import io.kvorum.perf.load.Workload;
import io.kvorum.perf.profile.AsyncProfiler;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/** The options run and search share: the target, the load, the profile and the output folder. */
final class LoadOptions {

    @Option(names = "--nodes", description = "Nodes to start, all on this machine, with as many replicas (default ${DEFAULT-VALUE}; "
            + "the figures in perf/README.md are of 1 and 3).", defaultValue = "1")
    int nodes;

    @Option(names = "--url", description = "Measure an already running node instead (127.0.0.1 only); no profiling unless --pid.")
    URI url;

    @Option(names = "--pid", description = "With --url: the node's process id, to profile it.")
    Long pid;

    @Option(names = "--jar", description = "Node jar (default ${DEFAULT-VALUE}); an older build can be measured side by side.",
            defaultValue = "node/target/kvorum-node.jar")
    Path jar;

    @Option(names = "--heap", description = "Node heap, -Xms = -Xmx (default ${DEFAULT-VALUE}).", defaultValue = "1g")
    String heap;

    @Option(names = "--node-jvm-opt", description = "Extra node JVM flag, repeatable (e.g. -XX:+UseZGC).")
    List<String> nodeJvmOptions = new ArrayList<>();

    @Option(names = "--node-option", description = "Extra node option, repeatable (e.g. --fsync).")
    List<String> nodeOptions = new ArrayList<>();

    @Option(names = "--workload", description = "put, get, mixed or delete (default ${DEFAULT-VALUE}).", defaultValue = "put",
            converter = WorkloadConverter.class)
    Workload workload;

    @Option(names = "--read-ratio", description = "Share of GETs in mixed (default ${DEFAULT-VALUE}).", defaultValue = "0.5")
    double readRatio;

    @Option(names = "--keys", description = "Key space key0..key{N-1}, all preloaded (default ${DEFAULT-VALUE}).", defaultValue = "100000")
    int keys;

    @Option(names = "--value-bytes", description = "Value size (default ${DEFAULT-VALUE}).", defaultValue = "256")
    int valueBytes;

    @Option(names = "--ack", description = "ack of every request (default: the node's).")
    Integer ack;

    @Option(names = "--from", description = "from of every request (default: the node's).")
    Integer from;

    @Option(names = "--skew", description = "0 = uniform keys, else Zipfian theta, e.g. 0.99 (default ${DEFAULT-VALUE}).", defaultValue = "0")
    double skew;

    @Option(names = "--duration", description = "Measured time; for search, of the profiled answer, each step taking "
            + "--step-duration (default ${DEFAULT-VALUE}).", defaultValue = "30s",
            converter = DurationConverter.class)
    Duration duration;

    @Option(names = "--warmup", description = "Same load before measuring, not recorded (default ${DEFAULT-VALUE}; 0s: none).",
            defaultValue = "10s", converter = DurationConverter.class)
    Duration warmup;

    @Option(names = "--connections", description = "Connections (default ${DEFAULT-VALUE}).", defaultValue = "64")
    int connections;

    @Option(names = "--threads", description = "Load generator threads (default ${DEFAULT-VALUE}).", defaultValue = "2")
    int threads;

    @Option(names = "--profile", description = "cpu,alloc,lock (any of them) or none (default ${DEFAULT-VALUE}).",
            defaultValue = "cpu,alloc,lock")
    String profile;

    @Option(names = "--profile-all-nodes", description = "Profile every node the run starts, not only n1: n2 and the others "
            + "into subfolders of the run folder (nX/cpu.html ...).")
    boolean profileAllNodes;

    @Option(names = "--out", description = "Run folder (default perf/runs/<yyyyMMdd-HHmmss>-<label>).")
    Path out;

    @Option(names = "--label", description = "Name of this run in reports and compare (default: workload, nodes and rate).")
    String label;

    @Option(names = "--tls", description = "Nodes serve HTTPS and mutual TLS with certificates made for the run "
            + "(./kvorum certs, in the run folder); every request perf sends is HTTPS.")
    boolean tls;

    @Option(names = "--token", description = "Nodes ask for a bearer token made for the run (a file in the run folder); "
            + "every request perf sends carries it.")
    boolean token;

    /** The events of --profile; empty for "none". */
    Set<AsyncProfiler.Event> profileEvents() {
        if (profile.equalsIgnoreCase("none")) {
            return Set.of();
        }
        Set<AsyncProfiler.Event> events = EnumSet.noneOf(AsyncProfiler.Event.class);
        for (String name : profile.split(",")) {
            try {
                events.add(AsyncProfiler.Event.valueOf(name.trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--profile takes cpu, alloc, lock or none, not '" + name + "'");
            }
        }
        return events;
    }

    /** Checks what picocli cannot: one sentence per problem. */
    void validate() {
        if (url != null && !isLoopback(url)) {
            throw new IllegalArgumentException("--url must be http://127.0.0.1:PORT (traffic stays on this machine), not " + url);
        }
        if (url != null && (tls || token)) {
            throw new IllegalArgumentException("--tls and --token secure the cluster perf starts; they do not go with --url");
        }
        if (url == null && nodes < 1) {
            throw new IllegalArgumentException("--nodes must be at least 1");
        }
        positive("--keys", keys);
        positive("--connections", connections);
        positive("--threads", threads);
        if (valueBytes < 0) {
            throw new IllegalArgumentException("--value-bytes must be 0 or more, got " + valueBytes);
        }
        if (connections < threads) {
            throw new IllegalArgumentException("--connections (" + connections + ") must be at least --threads (" + threads
                    + "): each thread of the load tool has connections of its own");
        }
        timingProblem("--duration", duration, warmup).ifPresent(problem -> {
            throw new IllegalArgumentException(problem);
        });
        if (skew < 0 || skew >= 1) {
            throw new IllegalArgumentException("--skew is 0 (uniform) or a Zipfian theta below 1, e.g. 0.99");
        }
        if (readRatio < 0 || readRatio > 1) {
            throw new IllegalArgumentException("--read-ratio is within 0..1");
        }
        profileEvents();
    }

    /**
     * What is wrong with a measured run's length and --warmup (every command that loads takes both),
     * or empty; {@code durationOption} is the length's option as the command names it.
     */
    static Optional<String> timingProblem(String durationOption, Duration duration, Duration warmup) {
        if (duration.isNegative() || duration.isZero()) {
            return Optional.of(durationOption + " must be positive, got " + duration.toMillis() + " ms");
        }
        if (warmup.isNegative()) {
            return Optional.of("--warmup must be 0s or more, got " + warmup.toMillis() + " ms");
        }
        return Optional.empty();
    }

    static void positive(String option, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(option + " must be positive, got " + value);
        }
    }

    static boolean isLoopback(URI uri) {
        return "http".equals(uri.getScheme()) && ("127.0.0.1".equals(uri.getHost()) || "localhost".equals(uri.getHost()));
    }

    String defaultLabel(String rate) {
        return workload.name().toLowerCase(Locale.ROOT) + "-" + (url != null ? "url" : nodes + "n") + "-" + rate;
    }

    LoadSpec loadSpec(URI target, Path scriptDir, int rate, Duration length) {
        return new LoadSpec(workload, scriptDir, target, keys, valueBytes, ack, from, skew, readRatio, rate, length,
                connections, threads);
    }

    static final class WorkloadConverter implements ITypeConverter<Workload> {
        @Override
        public Workload convert(String value) {
            try {
                return Workload.valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a workload: "
                        + Arrays.stream(Workload.values()).map(w -> w.name().toLowerCase(Locale.ROOT))
                        .collect(Collectors.joining(", ")));
            }
        }
    }

    /** "30s", "2m", "500ms" (a whole number and a unit) or an ISO-8601 duration ("PT1M30S"). */
    static final class DurationConverter implements ITypeConverter<Duration> {
        private static final Pattern SHORT = Pattern.compile("(-?\\d+)(ms|s|m)");

        @Override
        public Duration convert(String value) {
            String v = value.trim().toLowerCase(Locale.ROOT);
            Matcher m = SHORT.matcher(v);
            try {
                if (m.matches()) {
                    long n = Long.parseLong(m.group(1));
                    return switch (m.group(2)) {
                        case "ms" -> Duration.ofMillis(n);
                        case "s" -> Duration.ofSeconds(n);
                        default -> Duration.ofMinutes(n);
                    };
                }
                return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
            } catch (RuntimeException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a duration: a whole number and "
                        + "a unit (500ms, 30s, 2m) or ISO-8601 (PT1M30S)");
            }
        }
    }
}
