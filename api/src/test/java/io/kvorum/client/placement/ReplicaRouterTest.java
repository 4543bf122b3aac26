package io.kvorum.client.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.ClusterView.Member;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ReplicaRouterTest {

    private static Member member(int i, String state) {
        return new Member("n" + i, "10.0.0." + i, 8080 + i, 9080 + i, state);
    }

    private static URI endpoint(int i) {
        return URI.create("http://10.0.0." + i + ":" + (8080 + i));
    }

    private static ClusterView view(int replicationFactor, List<Member> members) {
        return new ClusterView("kvorum", 1, members, replicationFactor);
    }

    private static List<Member> normal(int n) {
        List<Member> members = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            members.add(member(i, Member.NORMAL));
        }
        return members;
    }

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void routesToTheKeysReplicasInPreferenceOrder() {
        ReplicaRouter router = ReplicaRouter.of(view(3, normal(5)));
        Rendezvous placement = Rendezvous.over(List.of("n1", "n2", "n3", "n4", "n5"));
        for (int i = 0; i < 1000; i++) {
            List<URI> expected = placement.replicas(key(i), 3).stream()
                    .map(id -> endpoint(Integer.parseInt(id.substring(1)))).toList();
            assertThat(router.replicasFor(key(i))).isEqualTo(expected);
        }
    }

    @Test
    void aKeyGoesWhereThePinnedOrderingSaysItLives() {
        // RendezvousTest pins "user:1" on n1..n5 to n1 n4 n5 n2 n3.
        ReplicaRouter router = ReplicaRouter.of(view(3, normal(5)));

        assertThat(router.replicasFor("user:1", 5)).containsExactly(
                endpoint(1), endpoint(4), endpoint(5), endpoint(2), endpoint(3));
        assertThat(router.replicasFor("user:1".getBytes(StandardCharsets.UTF_8)))
                .containsExactly(endpoint(1), endpoint(4), endpoint(5));
    }

    @Test
    void theReplicasForASmallerFromAreAPrefix() {
        ReplicaRouter router = ReplicaRouter.of(view(5, normal(5)));
        for (int i = 0; i < 1000; i++) {
            List<URI> all = router.replicasFor(key(i));
            assertThat(all).hasSize(5).doesNotHaveDuplicates();
            for (int from = 1; from < 5; from++) {
                assertThat(router.replicasFor(key(i), from)).isEqualTo(all.subList(0, from));
            }
        }
    }

    @Test
    void theOrderOfTheMembersInTheViewDoesNotMatter() {
        List<Member> shuffled = normal(5);
        Collections.shuffle(shuffled, new Random(5));
        ReplicaRouter sorted = ReplicaRouter.of(view(3, normal(5)));
        ReplicaRouter unsorted = ReplicaRouter.of(view(3, shuffled));
        for (int i = 0; i < 1000; i++) {
            assertThat(unsorted.replicasFor(key(i))).isEqualTo(sorted.replicasFor(key(i)));
        }
    }

    @Test
    void onlyNormalMembersReplicate() {
        List<Member> members = normal(3);
        members.add(member(4, Member.JOINING));
        members.add(member(5, Member.LEAVING));
        members.add(member(6, "some-later-state"));
        ReplicaRouter router = ReplicaRouter.of(view(3, members));
        ReplicaRouter normalOnly = ReplicaRouter.of(view(3, normal(3)));
        for (int i = 0; i < 1000; i++) {
            assertThat(router.replicasFor(key(i))).isEqualTo(normalOnly.replicasFor(key(i)));
        }
    }

    @Test
    void aFromAboveTheNormalMembersGivesEachOfThemOnce() {
        ReplicaRouter router = ReplicaRouter.of(view(5, normal(3)));

        assertThat(router.replicasFor(key(1))).containsExactlyInAnyOrder(endpoint(1), endpoint(2), endpoint(3));
        assertThat(router.replicasFor(key(1), 9)).isEqualTo(router.replicasFor(key(1), 3));
        assertThatThrownBy(() -> router.replicasFor(key(1), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("from must be at least 1, got 0");
    }

    @Test
    void httpsEndpointsWhenAsked() {
        ReplicaRouter router = ReplicaRouter.of(view(1, List.of(new Member("a", "::1", 8443, 9443, Member.NORMAL))), "https");

        assertThat(router.replicasFor(key(1))).containsExactly(URI.create("https://[::1]:8443"));
        assertThatThrownBy(() -> ReplicaRouter.of(view(1, normal(1)), "ftp")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aViewWithoutANormalMemberCannotRoute() {
        ClusterView joiningOnly = view(1, List.of(member(1, Member.JOINING)));

        assertThatThrownBy(() -> ReplicaRouter.of(joiningOnly)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cluster view of epoch 1 has no normal member");
    }
}
