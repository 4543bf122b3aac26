package io.kvorum.node.storage;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.kvorum.node.model.Record;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * What the node's store costs alone, single thread, uncontended: one {@code LevelDbStore.get} and
 * one one-put {@code apply}, on a store opened as a 1-node Kvorum opens it (100,000 keys of 256 B,
 * a 64 MiB cache, no fsync, no bucket index). The floor under a 1-node request's budget
 * (perf/README.md, "What one request costs"). In the store's package, as its {@code apply} is the
 * package's own; it lives with perf's tests, which have the node on their class path.
 *
 * <p>Not a test: run it by hand, alone on the machine, e.g. with
 * <pre>
 * mvn -B -q -pl perf -am -DskipTests test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=/tmp/perf-cp.txt -Dmdep.includeScope=test
 * java -Xms1g -Xmx1g -XX:+UseZGC -cp perf/target/test-classes:$(cat /tmp/perf-cp.txt) \
 *     io.kvorum.node.storage.StorageCostBenchmark [rounds=5]
 * </pre>
 * Each round is 1,000,000 random gets, then 200,000 one-put batches; it prints both per operation.
 */
public final class StorageCostBenchmark {

    private static final int KEYS = 100_000;
    private static final int GETS = 1_000_000;
    private static final int PUTS = 200_000;

    private StorageCostBenchmark() {
    }

    public static void main(String[] args) throws IOException {
        int rounds = Integer.parseInt(args.length > 0 ? args[0] : "5");
        Path dir = Files.createTempDirectory("kvorum-storage-cost");
        byte[] value = "v".repeat(256).getBytes(UTF_8);
        byte[][] keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = ("key" + k).getBytes(UTF_8);
        }
        long timestamp = System.currentTimeMillis() * 1000;
        try (LevelDbStore store = LevelDbStore.open(dir, false, 64L << 20, false)) {
            for (int i = 0; i < KEYS; i += 1000) {
                List<Mutation> batch = new ArrayList<>();
                for (int k = i; k < i + 1000; k++) {
                    batch.add(new Mutation.Put(keys[k], new Record(++timestamp, "n1", false, 0, value)));
                }
                store.apply(batch);
            }
            SplittableRandom random = new SplittableRandom(42);
            long sink = 0;
            for (int r = 1; r <= rounds; r++) {
                long start = System.nanoTime();
                for (int i = 0; i < GETS; i++) {
                    sink += store.get(keys[random.nextInt(KEYS)]).value().length;
                }
                long gotten = System.nanoTime();
                for (int i = 0; i < PUTS; i++) {
                    store.apply(List.of(new Mutation.Put(keys[random.nextInt(KEYS)],
                            new Record(++timestamp, "n1", false, 0, value))));
                }
                long applied = System.nanoTime();
                System.out.printf("round %d: get %.2f us, one-put apply %.2f us%n", r,
                        (gotten - start) / 1000.0 / GETS, (applied - gotten) / 1000.0 / PUTS);
            }
            System.out.println("(checksum " + sink + ")");
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
