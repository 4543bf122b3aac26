package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.LogCapture;
import io.kvorum.node.util.DurableFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The membership in the data dir (docs/operations.md#growing-and-shrinking-a-cluster): seeded once the node started, then it wins; damage is reported, never repaired by guess. */
class MembershipStoreTest {

    @TempDir
    Path dir;

    private static Membership membership(String name, String spec, int rf) throws InvalidTopologyException {
        return Membership.first(name, Topology.parse(spec), rf);
    }

    private static MembershipStore.Seed given(Membership options) {
        return new MembershipStore.Seed(options, true, true, true);
    }

    @Test
    void theSeedIsStoredOnceAndLaterStartsGetTheStoredMembershipWhateverTheOptions() throws Exception {
        Membership first = membership("prod", "n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081", 2);
        MembershipStore store = new MembershipStore(dir);

        assertThat(store.loadComparedWith(given(first))).as("nothing stored before a start succeeded").isNull();
        assertThat(store.storeIfAbsent(first)).isTrue();
        assertThat(Files.exists(dir.resolve(MembershipStore.FILE_NAME))).isTrue();

        Membership otherOptions = membership("test", "n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081,n3=127.0.0.1:8082:9082", 3);
        Membership again = new MembershipStore(dir).loadComparedWith(given(otherOptions));
        assertThat(again).isEqualTo(first);
        assertThat(again.identity()).as("the identity is stored, not recomputed").isEqualTo(first.identity());
        assertThat(Files.list(dir).map(p -> p.getFileName().toString()))
                .as("no temporary file left behind").containsExactly(MembershipStore.FILE_NAME);
    }

    @Test
    void onlyAnOptionTheOperatorGaveIsSaidToDifferFromTheStoredMembership() throws Exception {
        new MembershipStore(dir).store(membership("prod", "n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081", 2));
        // What a restart with none of the three options seeds: the defaults, and an RF derived from --cluster.
        Membership defaults = membership("kvorum", "n1=127.0.0.1:8080:9080", 1);
        LogCapture logs = new LogCapture();
        logs.attach();
        try {
            new MembershipStore(dir).loadComparedWith(new MembershipStore.Seed(defaults, false, false, false));
            assertThat(logs.problems()).as("defaults left alone differ from nothing").isEmpty();

            new MembershipStore(dir).loadComparedWith(given(defaults));
            assertThat(logs.problems()).hasSize(3)
                    .anySatisfy(line -> assertThat(line).contains("--cluster differs"))
                    .anySatisfy(line -> assertThat(line).contains("--cluster-name 'kvorum' differs from the stored cluster name 'prod'"))
                    .anySatisfy(line -> assertThat(line).contains("--replication-factor 1 differs from the cluster's, 2"));
        } finally {
            logs.detach();
        }
    }

    @Test
    void copiesAProcessKilledWhileSeedingLeftAsideAreRemovedAndNothingElse() throws Exception {
        Membership stored = membership("kvorum", "n1=127.0.0.1:8080:9080", 1);
        MembershipStore store = new MembershipStore(dir);
        store.store(stored);
        Files.writeString(dir.resolve(MembershipStore.FILE_NAME + "1714091507378899969.seed"), "{\"half\": ");
        Files.writeString(dir.resolve(MembershipStore.FILE_NAME + "42.seed"), "");
        Files.writeString(dir.resolve("records.seed"), "not the membership's");

        store.removeLeftovers();

        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder(MembershipStore.FILE_NAME, "records.seed");
        }
        assertThat(store.load()).isEqualTo(stored);
    }

    @Test
    void theSeedNeverReplacesAMembershipStoredMeanwhile() throws Exception {
        Membership seed = membership("kvorum", "n1=127.0.0.1:8080:9080", 1);
        Membership learned = new Membership(seed.clusterName(), seed.identity(), 2,
                Topology.parse("n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081"), 1);
        MembershipStore store = new MembershipStore(dir);
        store.store(learned);

        assertThat(store.storeIfAbsent(seed)).isFalse();

        assertThat(store.load()).isEqualTo(learned);
        assertThat(Files.list(dir).map(p -> p.getFileName().toString()))
                .as("no temporary file left behind").containsExactly(MembershipStore.FILE_NAME);
    }

    @Test
    void aLaterMembershipReplacesTheStoredOneAndKeepsTheIdentity() throws Exception {
        Membership first = membership("kvorum", "n1=127.0.0.1:8080:9080", 1);
        MembershipStore store = new MembershipStore(dir);
        store.store(first);
        Membership grown = new Membership(first.clusterName(), first.identity(), 2,
                Topology.parse("n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081"), 1);

        long forcedBefore = DurableFiles.directoriesForced();
        store.store(grown);

        assertThat(DurableFiles.directoriesForced()).as("the rename forced to the disk with its directory")
                .isGreaterThan(forcedBefore);
        assertThat(store.load()).isEqualTo(grown);
        assertThat(store.load().view().epoch()).isEqualTo(2);
    }

    @Test
    void aDamagedFileIsReportedAndLeftAsItIs() throws Exception {
        Path file = dir.resolve(MembershipStore.FILE_NAME);
        for (String damage : new String[] {"{\"name\":\"kvorum\",", "[]", "garbage here", "{\"name\": }", "{", "{\"name\":\"kvorum\",\"epoch\":1,"
                + "\"members\":[],\"replicationFactor\":1,\"identity\":\"x\"}", "{\"name\":\"kvorum\",\"epoch\":1,"
                + "\"members\":[{\"id\":\"n1\",\"host\":\"h\",\"http\":1,\"grpc\":2,\"state\":\"normal\"}],"
                + "\"replicationFactor\":1}"}) {
            Files.writeString(file, damage);

            assertThatThrownBy(() -> new MembershipStore(dir).loadComparedWith(given(membership("kvorum", "n1=127.0.0.1:8080:9080", 1))))
                    .as(damage).isInstanceOf(InvalidTopologyException.class)
                    .hasMessageContaining(MembershipStore.FILE_NAME).hasMessageContaining("damaged")
                    .as("one line in words (docs/operations.md#starting-nodes): no class name, no link").hasMessageNotContaining("\n")
                    .hasMessageNotContaining("com.google").hasMessageNotContaining("https://");
            assertThat(Files.readString(file)).as("not replaced").isEqualTo(damage);
        }
    }

    @Test
    void theDefaultNameAndReplicationFactorKeepTheIdentityOfEarlierVersions() throws Exception {
        // The digest earlier versions computed from the member list alone (first 8 bytes of SHA-256 of
        // "n1=127.0.0.1:8080:9080"), so that a node-by-node upgrade does not split a cluster.
        assertThat(membership("kvorum", "n1=127.0.0.1:8080:9080", 1).identity()).isEqualTo("0ffd03f306123b0d");

        Membership base = membership("kvorum", "n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081", 2);
        assertThat(membership("other", "n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081", 2).identity())
                .as("another name").isNotEqualTo(base.identity());
        assertThat(membership("kvorum", "n1=127.0.0.1:8080:9080,n2=127.0.0.1:8081:9081", 1).identity())
                .as("another replication factor").isNotEqualTo(base.identity());
        assertThat(membership("kvorum", "n2=127.0.0.1:8081:9081,n1=127.0.0.1:8080:9080", 2).identity())
                .as("the order of --cluster does not matter").isEqualTo(base.identity());
    }
}
