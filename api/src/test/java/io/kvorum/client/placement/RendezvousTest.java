package io.kvorum.client.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RendezvousTest {

    private static final List<String> SEVEN = List.of("n1", "n2", "n3", "n4", "n5", "n6", "n7");

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void hashesAsItAlwaysDid() {
        assertThat(Rendezvous.keyHash(new byte[0])).isEqualTo(0xf52a15e9a9b5e89bL);
        assertThat(Rendezvous.memberSeed("n1")).isEqualTo(0xf8e46110455c6e53L);
        assertThat(Rendezvous.keyHash("user:1".getBytes(StandardCharsets.UTF_8))).isEqualTo(0x3290bc1a92ad86c2L);
        assertThat(Rendezvous.mix(1)).isEqualTo(0x5692161d100b05e5L);
        assertThat(Rendezvous.score(1, 0)).isEqualTo(0x5692161d100b05e5L);
    }

    /** Two clusters of five, listed out of order: the second with ids that sort unlike numbers. */
    private static final Map<String, List<String>> PINNED_CLUSTERS = Map.of(
            "numbered", List.of("n4", "n2", "n5", "n1", "n3"),
            "named", List.of("z_1", "node-9", "alpha", "node-10", "beta"));

    // Computed by the node's Placement before it moved here (FNV-1a, then splitmix64); update them
    // only on purpose, as they place data. Keys are hex ('' is the empty key): "", "a", "user:1",
    // "café", "key-42", ff 00 80.
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "numbered | ''           | n2 n1 n4 n3 n5",
            "numbered | 61           | n1 n2 n3 n5 n4",
            "numbered | 757365723a31 | n1 n4 n5 n2 n3",
            "numbered | 636166c3a9   | n3 n4 n2 n5 n1",
            "numbered | 6b65792d3432 | n4 n3 n1 n5 n2",
            "numbered | ff0080       | n5 n2 n1 n4 n3",
            "named    | ''           | node-10 beta alpha node-9 z_1",
            "named    | 61           | z_1 node-10 alpha node-9 beta",
            "named    | 757365723a31 | alpha node-10 beta node-9 z_1",
            "named    | 636166c3a9   | alpha node-9 beta z_1 node-10",
            "named    | 6b65792d3432 | node-9 beta alpha node-10 z_1",
            "named    | ff0080       | beta node-10 z_1 node-9 alpha"})
    void placesKeysOnFiveNodesAsItAlwaysDid(String cluster, String keyHex, String ordering) {
        Rendezvous r = Rendezvous.over(PINNED_CLUSTERS.get(cluster));
        assertThat(r.replicas(HexFormat.of().parseHex(keyHex), 5)).isEqualTo(List.of(ordering.split(" ")));
    }

    @Test
    void aSmallerCountIsAPrefixOfALargerOne() {
        Rendezvous r = Rendezvous.over(SEVEN);
        for (int i = 0; i < 2000; i++) {
            for (int count = 1; count < SEVEN.size(); count++) {
                List<String> smaller = r.replicas(key(i), count);
                assertThat(smaller).hasSize(count);
                assertThat(r.replicas(key(i), count + 1).subList(0, count)).isEqualTo(smaller);
            }
        }
    }

    @Test
    void doesNotDependOnTheOrderOfTheMembers() {
        Rendezvous sorted = Rendezvous.over(SEVEN);
        List<String> shuffled = new ArrayList<>(SEVEN);
        Collections.shuffle(shuffled, new Random(7));
        Rendezvous fromShuffled = Rendezvous.over(shuffled);
        List<String> reversed = new ArrayList<>(SEVEN);
        Collections.reverse(reversed);
        Rendezvous fromReversed = Rendezvous.over(reversed);
        assertThat(fromShuffled.memberIds()).isEqualTo(SEVEN);
        for (int i = 0; i < 2000; i++) {
            assertThat(fromShuffled.replicas(key(i), 7)).isEqualTo(sorted.replicas(key(i), 7));
            assertThat(fromReversed.replicas(key(i), 7)).isEqualTo(sorted.replicas(key(i), 7));
        }
    }

    @Test
    void theOrderIsOfIndicesIntoTheSortedIdsAndCoversEveryMemberOnce() {
        Rendezvous r = Rendezvous.over(List.of("c", "a", "b"));
        for (int i = 0; i < 500; i++) {
            int[] order = r.order(key(i), 3);
            assertThat(order).containsExactlyInAnyOrder(0, 1, 2);
            assertThat(r.replicas(key(i), 3)).containsExactly(
                    r.memberIds().get(order[0]), r.memberIds().get(order[1]), r.memberIds().get(order[2]));
        }
    }

    @Test
    void everyCountIsTheHighestScoresFirstAsAFullSortGivesThem() {
        Random random = new Random(42);
        for (int members = 1; members <= 12; members++) {
            List<String> ids = new ArrayList<>();
            for (int m = 0; m < members; m++) {
                ids.add("node-" + random.nextInt(1_000_000) + "-" + m);
            }
            Rendezvous r = Rendezvous.over(ids);
            for (int k = 0; k < 300; k++) {
                byte[] key = key(random.nextInt());
                List<Integer> sorted = fullSort(r, key);
                for (int count = 1; count <= members; count++) {
                    assertThat(r.order(key, count)).containsExactly(
                            sorted.subList(0, count).stream().mapToInt(Integer::intValue).toArray());
                }
            }
        }
    }

    /** The preference list by its definition: every member scored, highest first, ties by index. */
    private static List<Integer> fullSort(Rendezvous r, byte[] key) {
        long keyHash = Rendezvous.keyHash(key);
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < r.size(); i++) {
            order.add(i);
        }
        order.sort((a, b) -> {
            int c = Long.compareUnsigned(Rendezvous.score(keyHash, Rendezvous.memberSeed(r.memberIds().get(b))),
                    Rendezvous.score(keyHash, Rendezvous.memberSeed(r.memberIds().get(a))));
            return c != 0 ? c : Integer.compare(a, b);
        });
        return order;
    }

    @Test
    void firstReplicasAreSpreadEvenly() {
        Rendezvous r = Rendezvous.over(List.of("n1", "n2", "n3", "n4", "n5"));
        int[] counts = new int[5];
        int keys = 50_000;
        for (int i = 0; i < keys; i++) {
            counts[r.order(key(i), 1)[0]]++;
        }
        for (int c : counts) {
            assertThat((double) c).isBetween(keys / 5 * 0.9, keys / 5 * 1.1);
        }
    }

    @Test
    void rejectsACountOutsideTheMembers() {
        Rendezvous r = Rendezvous.over(List.of("n1", "n2", "n3"));
        assertThatThrownBy(() -> r.replicas(key(1), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("count 0 not in 1..3");
        assertThatThrownBy(() -> r.order(key(1), 4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rejectsNoMembersAndEmptyOrRepeatedIds() {
        assertThatThrownBy(() -> Rendezvous.over(List.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one member");
        assertThatThrownBy(() -> Rendezvous.over(List.of("n1", ""))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Rendezvous.over(List.of("n1", "n2", "n1"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("member id 'n1' is given twice");
    }
}
