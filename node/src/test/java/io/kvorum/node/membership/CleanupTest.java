package io.kvorum.node.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kvorum.node.cluster.Membership;
import io.kvorum.node.cluster.MembershipChangeException;
import io.kvorum.node.cluster.Placement;
import io.kvorum.node.cluster.Topology;
import io.kvorum.node.model.Record;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.StorageService;
import io.kvorum.node.time.HybridLogicalClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v0/cleanup} against a membership change that starts while it runs
 * (docs/operations.md#growing-and-shrinking-a-cluster): it judges by the placement of the epoch
 * it started at, so it must stop as soon as that epoch is no longer the newest, and never leave
 * dropped a record that this node replicates under the new membership. Issue 53: it checked the
 * membership once, then scanned the whole store with that placement.
 *
 * <p>n1 of n1..n3 at replication factor 1 holds 300 keys; the change is made as the first record
 * is dropped (the store's change listener runs after each write), so that every later decision
 * of the scan is one against a stale placement.
 */
@Timeout(60)
class CleanupTest {

    private static final List<byte[]> KEYS = IntStream.range(0, 300)
            .mapToObj(i -> ("cleanup-" + i).getBytes(StandardCharsets.UTF_8)).toList();

    @TempDir
    Path dir;

    private StorageService storage;
    private final AtomicReference<Membership> membership = new AtomicReference<>();
    private final AtomicLong seenEpoch = new AtomicLong();

    @BeforeEach
    void setUp() throws Exception {
        LevelDbStore store = LevelDbStore.open(dir.resolve("records"), false, 8 << 20, true);
        storage = new StorageService(store, 1, 1024);
        for (byte[] key : KEYS) {
            storage.write(key, Record.value(HybridLogicalClock.pack(1_700_000_000_000L, 0), "n2",
                    "v".getBytes(StandardCharsets.UTF_8), Record.NEVER_EXPIRES)).join();
        }
        membership.set(Membership.first("kvorum", Topology.parse(
                "n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083"), 1));
    }

    @AfterEach
    void tearDown() throws Exception {
        storage.close();
    }

    private Cleanup cleanup() {
        return new Cleanup(storage, membership::get, () -> Math.max(seenEpoch.get(), membership.get().epoch()), "n1");
    }

    /** Runs {@code change} once, as the first record cleanup drops leaves the store. */
    private void onFirstDrop(Runnable change) {
        storage.store().onChangedBuckets(bucket -> {
            if (membership.get().epoch() == Membership.FIRST_EPOCH && seenEpoch.get() == 0) {
                change.run();
            }
        });
    }

    /** The keys n1 replicates under {@code m}. */
    private static List<byte[]> replicatedByN1(Membership m) {
        Placement placement = new Placement(m.current());
        return KEYS.stream().filter(k -> placement.replicasFor(k, 1).get(0).id().equals("n1")).toList();
    }

    private List<String> missing(List<byte[]> keys) {
        return keys.stream().filter(k -> storage.store().get(k) == null)
                .map(k -> new String(k, StandardCharsets.UTF_8)).toList();
    }

    @Test
    void aRemoveAdoptedWhileItRunsStopsItAndNothingTheNodeNowReplicatesIsLost() {
        Membership before = membership.get();
        Membership after = before.withRemoved("n3");
        assertThat(replicatedByN1(after)).as("keys n1 gains from n3").hasSizeGreaterThan(replicatedByN1(before).size());
        onFirstDrop(() -> membership.set(after));

        Throwable stopped = catchThrowable(() -> cleanup().run());

        assertThat(missing(replicatedByN1(after))).as("records n1 replicates at epoch %d", after.epoch()).isEmpty();
        assertThat(stopped).as("cleanup that saw its epoch change").isInstanceOf(MembershipChangeException.class)
                .hasMessageContaining("run it again once the change is complete");
        assertThat(((MembershipChangeException) stopped).reason()).isEqualTo(MembershipChangeException.Reason.IN_PROGRESS);
    }

    @Test
    void aNewerEpochSeenOnAMembersRequestStopsItBeforeTheNodeAdoptsIt() {
        Membership after = membership.get().withRemoved("n3");
        onFirstDrop(() -> seenEpoch.set(after.epoch()));

        Throwable stopped = catchThrowable(() -> cleanup().run());

        membership.set(after); // adopted once the proposal arrives
        assertThat(missing(replicatedByN1(after))).as("records n1 replicates at epoch %d", after.epoch()).isEmpty();
        assertThat(stopped).isInstanceOf(MembershipChangeException.class);
    }

    @Test
    void withoutAChangeItDropsExactlyWhatTheNodeDoesNotReplicate() {
        long dropped = cleanup().run();

        List<byte[]> kept = replicatedByN1(membership.get());
        assertThat(dropped).isEqualTo(KEYS.size() - kept.size());
        assertThat(missing(kept)).isEmpty();
        assertThat(missing(KEYS)).hasSize(KEYS.size() - kept.size());
    }
}
