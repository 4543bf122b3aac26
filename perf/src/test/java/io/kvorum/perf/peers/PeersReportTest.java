package io.kvorum.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class PeersReportTest {

    private static final PeersReport.Settings SETTINGS = new PeersReport.Settings(100_000, 100, 128, 3000,
            Duration.ofSeconds(60), Duration.ofSeconds(120), Duration.ofSeconds(10), 1024, "1g");

    /**
     * {@code requests} answers over {@code seconds} with latencies of whole milliseconds from 1 to
     * {@code maxMs}, spread evenly (request i: 1 + (maxMs - 1) i / requests, rounded down), and failures.
     */
    private static LoadResult load(long requests, double seconds, long maxMs, Map<String, Long> failures) {
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        for (long i = 1; i <= requests; i++) {
            h.recordValue(TimeUnit.MILLISECONDS.toNanos(1 + (maxMs - 1) * i / requests));
        }
        return new LoadResult(requests, seconds, new TreeMap<>(failures), h);
    }

    private static PeersReport.Phase phase(LoadResult load, double serverSeconds, double clientSeconds, double wall) {
        return new PeersReport.Phase(load, new ProcCpu.Window(serverSeconds, clientSeconds, wall));
    }

    @Test
    void eachSystemGetsItsThroughputLatencyCpuPerRequestErrorsAndDurability() {
        PeersReport.SystemRun kvorum = new PeersReport.SystemRun(PeerSystem.KVORUM, 3, List.of("java -jar kvorum-node.jar"),
                load(100_000, 12.5, 5, Map.of()), new PeersReport.Warmup(List.of(5000.0, 9000.0, 9100.0, 9050.0), 40, true),
                phase(load(600_000, 60, 40, Map.of()), 120, 30, 60),          // 10,000/s; 200 µs, 50 µs a request
                phase(load(900_000, 60, 30, Map.of()), 90, 27, 60),           // 15,000/s; 100 µs, 30 µs
                phase(load(180_000, 60, 900, Map.of("DriverTimeoutException", 3L)), 45, 9, 60), // 250 µs, 50 µs
                null);
        PeersReport.SystemRun etcd = new PeersReport.SystemRun(PeerSystem.ETCD, 3, List.of("/usr/bin/etcd --name=n1"),
                null, null, null, null, null, "etcd n2 exited with status 1");

        String md = PeersReport.render("./kvorum perf peers --nodes 3", "2 cpus (test)", SETTINGS, List.of(kvorum, etcd));

        assertThat(md).startsWith("# Kvorum perf peers\n").contains("Command: `./kvorum perf peers --nodes 3`")
                .contains("100,000 keys of 100 random bytes");
        // closed loop: rates and service-time percentiles
        assertThat(md).contains("| Kvorum | 3 | 10,000 | 20.0 ms | 39.0 ms | 15,000 | 15.0 ms | 29.0 ms | 0 |");
        // open loop: achieved rate, p50, p99, p99.9, max, errors
        assertThat(md).contains("| Kvorum | 3 | 3,000 | 450 ms | 891 ms | 899 ms | 900 ms | 3 |");
        // CPU per request from the windows
        assertThat(md).contains("| Kvorum | 3 | writes, closed loop | 200.0 | 2.00 | 50.0 | 0.50 |")
                .contains("| Kvorum | 3 | reads, closed loop | 100.0 | 1.50 | 30.0 | 0.45 |")
                .contains("| Kvorum | 3 | 3,000/s mixed, open loop | 250.0 | 0.75 | 50.0 | 0.15 |");
        assertThat(md).contains("- Kvorum, 3 nodes, open loop: 3 DriverTimeoutException");
        assertThat(md).contains("100,000 keys in 12.5 s, 0 errors").contains("5,000, 9,000, 9,100, 9,050")
                .contains("steady after 40 s");
        assertThat(md).contains("## Not measured").contains("- etcd 3.4, 3 nodes: etcd n2 exited with status 1");
        assertThat(md).contains("**Kvorum**: " + PeerSystem.KVORUM.durability())
                .contains("**etcd 3.4**: " + PeerSystem.ETCD.durability());
        assertThat(md).contains("concurrent_reads: 16").contains("/usr/bin/etcd --name=n1");
        // a system that was not measured has no row in the measured tables
        assertThat(md).doesNotContain("| etcd 3.4 | 3 |").doesNotContain("$CASSANDRA_CLASSPATH");
    }

    @Test
    void aWarmUpCutShortByItsBoundIsSaidNotSteady() {
        PeersReport.SystemRun run = new PeersReport.SystemRun(PeerSystem.CASSANDRA, 1, List.of("java ..."),
                load(1000, 1, 2, Map.of()), new PeersReport.Warmup(List.of(100.0, 200.0), 20, false),
                phase(load(10, 1, 2, Map.of()), 1, 1, 1), phase(load(10, 1, 2, Map.of()), 1, 1, 1),
                phase(load(10, 1, 2, Map.of()), 1, 1, 1), null);

        String md = PeersReport.render("x", "y", SETTINGS, List.of(run));

        assertThat(md).contains("**not steady** after 20 s (--warmup)").doesNotContain("## Errors by kind")
                .doesNotContain("## Not measured").contains("| Cassandra 5.0 | 1 |")
                .contains("`$CASSANDRA_CLASSPATH` stands for the class path");
    }
}
