package io.kvorum.node.antientropy;

import io.kvorum.node.cluster.Topology;
import io.kvorum.node.cluster.InvalidTopologyException;
import io.kvorum.node.coordinator.LocalReplica;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.Clock;
import io.kvorum.node.time.HybridLogicalClock;
import io.kvorum.node.util.NamedThreadFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One node's anti-entropy without a network: its own LevelDB in a test directory, its storage
 * service, local replica, anti-entropy executor, {@link RepairStorage} and {@link AntiEntropyService}.
 * The test connects services as it likes (in-process gRPC, for one).
 */
public final class RepairFixture implements AutoCloseable {

    /** Three nodes; only the ids matter (placement), the ports are never bound. */
    public static final String TOPOLOGY = "n1=127.0.0.1:1001:2001,n2=127.0.0.1:1002:2002,n3=127.0.0.1:1003:2003";

    public final String id;
    public final StorageService storage;
    public final ScheduledThreadPoolExecutor executor;
    public final HybridLogicalClock hlc = new HybridLogicalClock(Clock.SYSTEM);
    public final RepairStorage repair;
    public final RepairLedger ledger;
    public final AntiEntropyService service;

    /**
     * @param fanoutBits the tree shape the node's rounds use
     * @param depth      the tree shape the node's rounds use
     */
    public RepairFixture(Path dir, String id, int replicationFactor, int fanoutBits, int depth) throws Exception {
        this.id = id;
        this.storage = new StorageService(LevelDbStore.open(dir.resolve(id), false, 8 << 20), 2, 4096);
        this.executor = new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("anti-entropy-" + id));
        this.repair = new RepairStorage(storage, new LocalReplica(id, storage, hlc));
        this.ledger = RepairLedger.open(java.nio.file.Files.createDirectories(dir.resolve(id + "-state")), id, topology(), replicationFactor, hlc::now);
        storage.store().onStoredTombstones(ledger::tombstoneStored);
        this.service = new AntiEntropyService(id, topology(), replicationFactor, repair, executor, Duration.ZERO,
                Duration.ofSeconds(20), fanoutBits, depth, ledger);
    }

    public static Topology topology() {
        try {
            return Topology.parse(TOPOLOGY);
        } catch (InvalidTopologyException e) {
            throw new IllegalStateException(e);
        }
    }

    public static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }

    public static Record value(long physicalMillis, String writer, String value) {
        return Record.value(physicalMillis << 16, writer, value.getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES);
    }

    /** Stores a record directly (compare-then-write, as a replica would). */
    public void put(String key, Record record) {
        storage.write(key(key), record).join();
    }

    /** Stores many records, a batch at a time. */
    public void putAll(List<Entry> entries) {
        List<java.util.concurrent.CompletableFuture<Boolean>> pending = new ArrayList<>();
        for (Entry e : entries) {
            pending.add(storage.write(e.key(), e.record()));
            if (pending.size() == 1024) {
                pending.forEach(java.util.concurrent.CompletableFuture::join);
                pending.clear();
            }
        }
        pending.forEach(java.util.concurrent.CompletableFuture::join);
    }

    /** Every stored record, by key. */
    public SortedMap<String, Record> dump() {
        SortedMap<String, Record> out = new TreeMap<>();
        try (LevelDbStore.Cursor cursor = storage.store().cursor(new byte[0], null)) {
            List<Entry> batch;
            while (!(batch = cursor.next(1024, 1 << 20)).isEmpty()) {
                for (Entry e : batch) {
                    out.put(new String(e.key(), StandardCharsets.UTF_8), e.record());
                }
            }
        }
        return out;
    }

    @Override
    public void close() throws Exception {
        service.close();
        executor.shutdown();
        executor.awaitTermination(5, TimeUnit.SECONDS);
        storage.close();
    }
}
