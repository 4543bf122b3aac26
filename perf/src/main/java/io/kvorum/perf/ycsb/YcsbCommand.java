package io.kvorum.perf.ycsb;

import io.kvorum.perf.PerfMain;
import io.kvorum.client.KvorumClient;
import io.kvorum.perf.cluster.ClusterSecurity;
import io.kvorum.perf.cluster.LocalCluster;
import io.kvorum.perf.report.GitInfo;
import io.kvorum.perf.report.MachineInfo;
import io.kvorum.perf.ycsb.YcsbPhase.Outcome;
import io.kvorum.perf.ycsb.YcsbReport.WorkloadRun;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kvorum perf ycsb}: YCSB's core workloads against a local cluster it starts (or a
 * loopback target it is given), with a Markdown report.
 *
 * <p>Steps: start the cluster ({@link LocalCluster}); load {@code --records} records with workload
 * A's load phase; run each chosen workload for {@code --operations} operations in the order of
 * {@link Workload} (A, B, C, F, D, E); stop the cluster; write {@code report.md} and
 * {@code result.json}. Each YCSB phase is a child JVM ({@link YcsbPhase}). A failed workload is
 * reported and the others still run; a failed load stops the run. Exit code 0 only when every
 * phase finished.
 */
@Command(name = "ycsb", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = {"Run the YCSB core workloads (A-F) against a local Kvorum cluster and write a Markdown report.",
                "Loads --records records once, then runs each workload in YCSB's order A, B, C, F, D, E."})
public final class YcsbCommand implements Callable<Integer> {

    /** How long a started (or given) cluster may take to accept its first quorum writes. */
    private static final Duration WRITABLE_WITHIN = Duration.ofSeconds(60);

    @Option(names = "--nodes", description = "Nodes of the local cluster to start: 1 or 3 (default: ${DEFAULT-VALUE}).",
            defaultValue = "3")
    int nodes;

    @Option(names = "--url", description = "Use running node(s) on this machine instead of starting a cluster: "
            + "comma-separated URLs, e.g. http://127.0.0.1:8080,http://127.0.0.1:8081.")
    String url;

    @Option(names = "--jar", description = "The node jar (default: ${DEFAULT-VALUE}).",
            defaultValue = "node/target/kvorum-node.jar")
    Path jar;

    @Option(names = "--heap", description = "Heap of each node, -Xms and -Xmx (default: ${DEFAULT-VALUE}).",
            defaultValue = "1g")
    String heap;

    @Option(names = "--workloads", description = "Which workloads, comma-separated letters (default: ${DEFAULT-VALUE}).",
            defaultValue = "a,b,c,d,e,f")
    String workloads;

    @Option(names = "--records", description = "Records loaded before the workloads (default: ${DEFAULT-VALUE}).",
            defaultValue = "100000")
    int records;

    @Option(names = "--operations", description = "Operations per workload (default: ${DEFAULT-VALUE}).",
            defaultValue = "100000")
    int operations;

    @Option(names = "--threads", description = "YCSB client threads (default: ${DEFAULT-VALUE}).", defaultValue = "16")
    int threads;

    @Option(names = "--target", description = "Operations per second for each phase, 0 = as fast as it goes "
            + "(default: ${DEFAULT-VALUE}).", defaultValue = "0")
    int target;

    @Option(names = "--ack", description = "Replicas that must answer each request (default: the node's, a majority).")
    Integer ack;

    @Option(names = "--from", description = "Replicas asked for each request (default: the node's replication factor).")
    Integer from;

    @Option(names = "--workload-dir", description = "Where workloada..workloadf are (default: ${DEFAULT-VALUE}).",
            defaultValue = "perf/ycsb/workloads")
    Path workloadDir;

    @Option(names = "--out", description = "Run folder (default: perf/runs/<yyyyMMdd-HHmmss>-ycsb).")
    Path out;

    @Option(names = "--tls", description = "The local cluster serves HTTPS and mutual TLS with certificates made for "
            + "the run; the binding trusts their CA (kvorum.ca).")
    boolean tls;

    @Option(names = "--token", description = "The local cluster asks for a bearer token made for the run; the binding "
            + "sends it (kvorum.token.file).")
    boolean token;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        List<Workload> chosen;
        List<URI> given;
        try {
            chosen = Workload.parseList(workloads);
            given = url != null ? loopbackUrls(url) : List.of();
            validate(chosen);
            if (url != null && (tls || token)) {
                throw new IllegalArgumentException("--tls and --token secure the cluster ycsb starts; they do not go with --url");
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        Path runDir = out != null ? out
                : Path.of("perf", "runs", LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + "-ycsb");
        Files.createDirectories(runDir);
        Instant started = Instant.now();
        String loadBefore = MachineInfo.loadAverage();
        List<String> invocation = new ArrayList<>(List.of("./kvorum", "perf"));
        invocation.addAll(spec.root().commandLine().getParseResult().originalArgs());
        String commandLine = YcsbReport.shellJoin(invocation);

        List<String> nodeCommands = List.of();
        Outcome load;
        List<WorkloadRun> runs = new ArrayList<>();
        String targetDescription;
        List<URI> urls;
        LocalCluster cluster = null;
        ChildProcesses children = new ChildProcesses();
        ClusterSecurity security = ClusterSecurity.create(runDir, tls, token);
        ClientSecurity clientSecurity = new ClientSecurity(security.caFile(), security.tokenFile(), false);
        try {
            if (given.isEmpty()) {
                err.printf("ycsb: starting %d node(s) from %s (logs in %s) ...%n", nodes, jar, runDir);
                err.flush();
                try {
                    cluster = LocalCluster.start(new LocalCluster.Spec(nodes, jar, heap, List.of(), List.of(), runDir),
                            security);
                } catch (IOException e) {
                    err.println("ycsb: could not start the cluster: " + e.getMessage());
                    return 1;
                }
                urls = cluster.httpUris();
                nodeCommands = cluster.commandLines();
                targetDescription = nodes + " local node" + (nodes == 1 ? "" : "s") + " (" + join(urls) + "), heap "
                        + heap + " each";
            } else {
                urls = given;
                targetDescription = "running node(s) at " + join(urls);
            }
            Map<String, String> common = new LinkedHashMap<>();
            common.put(KvorumDB.URLS, join(urls));
            common.putAll(clientSecurity.properties());
            if (ack != null) {
                common.put(KvorumDB.ACK, ack.toString());
            }
            if (from != null) {
                common.put(KvorumDB.FROM, from.toString());
            }

            try {
                QuorumProbe.await(urls, KvorumClient.Options.quorum(ack != null ? ack : 0, from != null ? from : 0),
                        WRITABLE_WITHIN, clientSecurity);
            } catch (TimeoutException e) {
                err.println("ycsb: " + e.getMessage());
                return 1;
            }
            Map<String, String> loadProperties = with(common, records, records);
            // A failed insert ends a YCSB loading thread unless retried: retry a few, each failure still counted.
            loadProperties.put("core_workload_insertion_retry_limit", "3");
            loadProperties.put("core_workload_insertion_retry_interval", "1");
            load = runPhase(children, err, runDir, new YcsbPhase("load", workloadDir.resolve(Workload.A.fileName()), true,
                    threads, target, loadProperties));
            if (load.succeeded()) {
                long insertedBefore = 0;
                for (Workload w : chosen) {
                    // E runs after D: tell it the records D added (their key numbers follow --records),
                    // so E's scans and inserts cover the whole key space instead of overwriting D's keys.
                    long recordsNow = records + (w == Workload.E ? insertedBefore : 0);
                    Outcome o = runPhase(children, err, runDir, new YcsbPhase(w.fileName(), workloadDir.resolve(w.fileName()), false,
                            threads, target, with(common, recordsNow, operations)));
                    runs.add(new WorkloadRun(w, recordsNow, o));
                    if (w == Workload.D && o.succeeded()) {
                        insertedBefore += o.output().attempted("INSERT");
                    }
                }
            }
        } finally {
            if (cluster != null) {
                err.println("ycsb: stopping the nodes ...");
                err.flush();
                cluster.close();
            }
        }
        YcsbReport.Settings settings = new YcsbReport.Settings(targetDescription, urls.stream().map(URI::toString).toList(),
                records, operations, threads, target, quorum());
        YcsbReport.Environment env = new YcsbReport.Environment(MachineInfo.current(), YcsbReport.Environment.currentJvm(),
                loadBefore, MachineInfo.loadAverage(), GitInfo.of(Path.of(".")));
        new YcsbReport(started, Instant.now(), commandLine, settings, env, nodeCommands, load, runs).write(runDir);
        err.printf("ycsb: report in %s%n", runDir.resolve("report.md"));
        boolean allFinished = load.succeeded() && runs.stream().allMatch(r -> r.outcome().succeeded());
        if (!load.succeeded()) {
            err.println("ycsb: the load failed, so no workload ran: " + load.failure());
        }
        return allFinished ? 0 : 1;
    }

    private void validate(List<Workload> chosen) {
        if (url == null && nodes != 1 && nodes != 3) {
            throw new IllegalArgumentException("--nodes must be 1 or 3, not " + nodes);
        }
        if (url != null && spec.commandLine().getParseResult().hasMatchedOption("--nodes")) {
            throw new IllegalArgumentException("give --nodes or --url, not both");
        }
        positive("--records", records);
        positive("--operations", operations);
        positive("--threads", threads);
        if (target < 0) {
            throw new IllegalArgumentException("--target must be 0 (unthrottled) or more, not " + target);
        }
        if (ack != null) {
            positive("--ack", ack);
        }
        if (from != null) {
            positive("--from", from);
        }
        if (ack != null && from != null && ack > from) {
            throw new IllegalArgumentException("--ack " + ack + " is more than --from " + from);
        }
        for (Workload w : chosen) {
            if (!Files.isRegularFile(workloadDir.resolve(w.fileName()))) {
                throw new IllegalArgumentException("no workload file " + workloadDir.resolve(w.fileName())
                        + " (run from the repository root, or give --workload-dir)");
            }
        }
        if (!Files.isRegularFile(workloadDir.resolve(Workload.A.fileName()))) {
            throw new IllegalArgumentException("no workload file " + workloadDir.resolve(Workload.A.fileName())
                    + " for the load phase (run from the repository root, or give --workload-dir)");
        }
    }

    private static void positive(String option, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(option + " must be positive, not " + value);
        }
    }

    /** The URLs of {@code --url}; only this machine's loopback addresses are accepted. */
    static List<URI> loopbackUrls(String urls) {
        List<URI> uris = new ArrayList<>();
        for (String s : urls.split(",")) {
            if (s.isBlank()) {
                continue;
            }
            URI uri;
            try {
                uri = URI.create(s.trim());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--url: not a URL: " + s.trim());
            }
            if (!"http".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0) {
                throw new IllegalArgumentException("--url: give http://HOST:PORT, not " + s.trim());
            }
            try {
                if (!InetAddress.getByName(uri.getHost()).isLoopbackAddress()) {
                    throw new IllegalArgumentException("--url: " + uri.getHost()
                            + " is not a loopback address; this command only loads nodes on this machine");
                }
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("--url: unknown host " + uri.getHost());
            }
            uris.add(uri);
        }
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("--url: no URL given");
        }
        return uris;
    }

    private static Map<String, String> with(Map<String, String> common, long recordCount, long operationCount) {
        Map<String, String> p = new LinkedHashMap<>(common);
        p.put("recordcount", Long.toString(recordCount));
        p.put("operationcount", Long.toString(operationCount));
        return p;
    }

    private static Outcome runPhase(ChildProcesses children, PrintWriter err, Path runDir, YcsbPhase phase)
            throws IOException, InterruptedException {
        err.printf("ycsb: %s ...%n", phase.name());
        err.flush();
        Outcome o = phase.run(children, Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                System.getProperty("java.class.path"), runDir);
        if (o.succeeded()) {
            err.printf("ycsb: %s: %,.0f ops/s over %.1f s%n", phase.name(), o.output().throughput(),
                    o.output().runtimeMs() / 1000.0);
        } else {
            err.printf("ycsb: %s failed: %s%n", phase.name(), o.failure());
        }
        err.flush();
        return o;
    }

    private String quorum() {
        if (ack == null && from == null) {
            return "the node's defaults (from = replication factor, ack = a majority of it)";
        }
        return (ack != null ? "ack " + ack : "ack: node default") + ", " + (from != null ? "from " + from : "from: node default");
    }

    private static String join(List<URI> uris) {
        return String.join(",", uris.stream().map(URI::toString).toList());
    }
}
