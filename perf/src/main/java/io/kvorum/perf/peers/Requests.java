package io.kvorum.perf.peers;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The requests of {@code perf peers}, the same for every system: keys key0..key{N-1} (as the wrk
 * scripts of the other perf commands name them) and values of random bytes, drawn from a pool so
 * that no two neighbouring values are alike and no system's compression gains on repeated data.
 */
public final class Requests {

    /** What a stretch of load sends. */
    public enum Mix {
        PUT, GET, MIXED
    }

    private static final int VALUE_POOL = 1024;

    private final KeyValueTarget target;
    private final byte[][] keys;
    private final byte[][] values;

    public Requests(KeyValueTarget target, int keyCount, int valueBytes) {
        if (keyCount < 1 || valueBytes < 1) {
            throw new IllegalArgumentException("keys and value bytes must be positive");
        }
        this.target = target;
        this.keys = new byte[keyCount][];
        for (int i = 0; i < keyCount; i++) {
            keys[i] = ("key" + i).getBytes(StandardCharsets.US_ASCII);
        }
        Random random = new Random(valueBytes * 31L + keyCount);
        this.values = new byte[VALUE_POOL][valueBytes];
        for (byte[] value : values) {
            random.nextBytes(value);
        }
    }

    /** Every key once, in order, then null: the preload. */
    public Supplier<CompletableFuture<?>> preload() {
        AtomicInteger next = new AtomicInteger();
        return () -> {
            int i = next.getAndIncrement();
            if (i >= keys.length) {
                next.set(keys.length); // stays exhausted, however many lanes ask
                return null;
            }
            return target.put(keys[i], values[i % VALUE_POOL]);
        };
    }

    /** Requests over uniformly random keys: writes, reads, or half of each. Never runs out. */
    public Supplier<CompletableFuture<?>> of(Mix mix) {
        return () -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            byte[] key = keys[random.nextInt(keys.length)];
            boolean read = mix == Mix.GET || (mix == Mix.MIXED && random.nextBoolean());
            return read ? target.get(key) : target.put(key, values[random.nextInt(VALUE_POOL)]);
        };
    }
}
