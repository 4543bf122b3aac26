package io.kvorum.node.storage;

import io.kvorum.node.model.Record;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Single-thread cost of one LevelDbStore.get and of one one-put apply, as a 1-node Kvorum runs them. */
public class GetCost {
    public static void main(String[] args) throws Exception {
        int keys = 100_000;
        int rounds = Integer.parseInt(args.length > 0 ? args[0] : "5");
        Path dir = Files.createTempDirectory("getcost");
        byte[] value = "v".repeat(256).getBytes(StandardCharsets.UTF_8);
        long ts = System.currentTimeMillis() * 1000;
        try (LevelDbStore store = LevelDbStore.open(dir, false, 64L << 20, false)) {
            for (int i = 0; i < keys; i += 1000) {
                List<Mutation> batch = new ArrayList<>();
                for (int k = i; k < i + 1000; k++) {
                    batch.add(new Mutation.Put(("key" + k).getBytes(StandardCharsets.UTF_8), new Record(++ts, "n1", false, 0, value)));
                }
                store.apply(batch);
            }
            byte[][] ks = new byte[keys][];
            for (int k = 0; k < keys; k++) {
                ks[k] = ("key" + k).getBytes(StandardCharsets.UTF_8);
            }
            SplittableRandom random = new SplittableRandom(42);
            int n = 1_000_000;
            long sink = 0;
            for (int r = 0; r < rounds; r++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    Record rec = store.get(ks[random.nextInt(keys)]);
                    sink += rec.value().length;
                }
                long t1 = System.nanoTime();
                int puts = 200_000;
                for (int i = 0; i < puts; i++) {
                    store.apply(List.of(new Mutation.Put(ks[random.nextInt(keys)], new Record(++ts, "n1", false, 0, value))));
                }
                long t2 = System.nanoTime();
                System.out.printf("round %d: get %.2f us, one-put apply %.2f us%n", r + 1,
                        (t1 - t0) / 1000.0 / n, (t2 - t1) / 1000.0 / puts);
            }
            System.out.println("sink " + sink);
        }
    }
}
