package io.kvorum.node.transport.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.kvorum.node.antientropy.MerkleTree;
import io.kvorum.node.antientropy.RepairFixture;
import io.kvorum.node.antientropy.RepairReport;
import io.kvorum.node.antientropy.RoundStats;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Measures anti-entropy rounds between two nodes in one JVM over real gRPC (Netty, loopback): both
 * hold N keys (default 1,000,000, 100-byte values); two rounds between identical replicas (the
 * first computes the maintained trees from the index, the second finds them up to date), then a
 * round after 1% of the keys changed (half newer on each side), then a check round. It prints,
 * per round, the duration, the bytes each way, the records exchanged, and the peak heap during the
 * round (summed over heap pools, both nodes together, garbage included).
 *
 * <p>Not a test: run it by hand (see perf/README.md, section "Anti-entropy"), e.g. with
 * {@code -Xmx256m} to see that a round fits in a small heap whatever the data size.
 *
 * <p>Arguments: {@code [keys] [tree depth] [data dir]}: keys per node (1,000,000), levels below the
 * root of 16-way trees ({@value MerkleTree#DEFAULT_DEPTH}, the node's default), and where the data
 * goes (a temporary directory); the data is deleted at the end.
 */
public final class AntiEntropyBenchmark {

    private static final String CLUSTER = "bench";
    private static final int VALUE_BYTES = 100;

    private AntiEntropyBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int depth = args.length > 1 ? Integer.parseInt(args[1]) : MerkleTree.DEFAULT_DEPTH;
        Path dir = args.length > 2 ? Files.createDirectories(Path.of(args[2]))
                : Files.createTempDirectory("kvorum-ae-bench-");
        int fanoutBits = MerkleTree.DEFAULT_FANOUT_BITS;
        System.out.printf("anti-entropy benchmark: %,d keys per node, %d-byte values, %,d leaves, max heap %d MiB, "
                + "%d CPUs%n", keys, VALUE_BYTES, 1 << (fanoutBits * depth), Runtime.getRuntime().maxMemory() >> 20,
                Runtime.getRuntime().availableProcessors());
        try (RepairFixture a = new RepairFixture(dir, "n1", 3, fanoutBits, depth);
             RepairFixture b = new RepairFixture(dir, "n2", 3, fanoutBits, depth)) {
            long t0 = System.nanoTime();
            load(a, b, keys);
            System.out.printf("loaded both nodes in %.1f s%n", (System.nanoTime() - t0) / 1e9);

            Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                    .addService(new AntiEntropyGrpcService(b.service)).build().start();
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext()
                    .directExecutor().build();
            try {
                a.service.start(List.of(new GrpcAntiEntropyPeer(new PeerChannel("n2", "n1", CLUSTER, channel), Duration.ofHours(1))));
                round(a, "identical replicas, first round (computes the trees)");
                round(a, "identical replicas, trees up to date");
                int changed = diverge(a, b, keys);
                round(a, String.format("%,d keys (%.1f%%) differ", changed, 100.0 * changed / keys));
                round(a, "after repair");
            } finally {
                channel.shutdownNow();
                server.shutdownNow();
            }
        } finally {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static byte[] key(int i) {
        return String.format("key%08d", i).getBytes(StandardCharsets.UTF_8);
    }

    private static Record version(int i, long millis, String writer) {
        byte[] value = new byte[VALUE_BYTES];
        for (int j = 0; j < VALUE_BYTES; j++) {
            value[j] = (byte) (i * 31 + j);
        }
        return Record.value(millis << 16, writer, value, Record.NEVER_EXPIRES);
    }

    private static void load(RepairFixture a, RepairFixture b, int keys) {
        List<Entry> batch = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            batch.add(new Entry(key(i), version(i, 1_700_000_000_000L + i, "n1")));
            if (batch.size() == 100_000 || i == keys - 1) {
                a.putAll(batch);
                b.putAll(batch);
                batch.clear();
            }
        }
    }

    /** Gives 1% of the keys a newer version: on n1 for half of them, on n2 for the other half. */
    private static int diverge(RepairFixture a, RepairFixture b, int keys) {
        List<Entry> onA = new ArrayList<>();
        List<Entry> onB = new ArrayList<>();
        for (int i = 0; i < keys; i += 100) {
            Record newer = version(i + 1, 1_800_000_000_000L + i, (i / 100) % 2 == 0 ? "n1" : "n2");
            ((i / 100) % 2 == 0 ? onA : onB).add(new Entry(key(i), newer));
        }
        a.putAll(onA);
        b.putAll(onB);
        return onA.size() + onB.size();
    }

    private static void round(RepairFixture initiator, String what) {
        System.gc();
        long baseline = heapUsed();
        List<MemoryPoolMXBean> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).toList();
        heapPools.forEach(MemoryPoolMXBean::resetPeakUsage);
        long start = System.nanoTime();
        RepairReport report = initiator.service.repair().join();
        double seconds = (System.nanoTime() - start) / 1e9;
        long peak = heapPools.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        if (!report.isComplete()) {
            throw new IllegalStateException("round failed: " + report.failures());
        }
        RoundStats r = report.rounds().get(0);
        System.out.printf("%-26s %6.2f s  buckets differing %,7d  records sent %,7d received %,7d  "
                        + "bytes sent %,11d received %,11d  heap before %,4d MiB, peak %,4d MiB%n",
                what, seconds, r.bucketsDiffering(), r.recordsSent(), r.recordsReceived(), r.bytesSent(),
                r.bytesReceived(), baseline >> 20, peak >> 20);
    }

    private static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
