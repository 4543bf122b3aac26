package io.kvorum.node.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The steps of a membership change (docs/operations.md#growing-and-shrinking-a-cluster) and the placement of each (PlacementPlan). */
class MembershipTest {

    private static final Membership THREE = Membership.first("kvorum",
            topology("n1=127.0.0.1:8081:9081,n2=127.0.0.1:8082:9082,n3=127.0.0.1:8083:9083"), 3);
    private static final ClusterMember N4 = new ClusterMember("n4", "127.0.0.1", 8084, 9084);

    private static Topology topology(String spec) {
        try {
            return Topology.parse(spec);
        } catch (InvalidTopologyException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> ids(Topology t) {
        return t.members().stream().map(ClusterMember::id).toList();
    }

    @Test
    void aJoinTakesThreeEpochsAndKeepsTheIdentity() {
        Membership joining = THREE.withJoining(N4);
        Membership switched = joining.withReadsFromComing();
        Membership done = switched.completed();

        assertThat(List.of(joining.epoch(), switched.epoch(), done.epoch())).containsExactly(2L, 3L, 4L);
        assertThat(List.of(joining.identity(), switched.identity(), done.identity())).containsOnly(THREE.identity());
        assertThat(joining.state("n4")).isEqualTo(MemberState.JOINING);
        assertThat(ids(joining.current())).containsExactly("n1", "n2", "n3");
        assertThat(ids(joining.coming())).containsExactly("n1", "n2", "n3", "n4");
        assertThat(ids(joining.readers())).as("reads stay on the current members").containsExactly("n1", "n2", "n3");
        assertThat(ids(switched.readers())).containsExactly("n1", "n2", "n3", "n4");
        assertThat(done.inChange()).isFalse();
        assertThat(done.state("n4")).isEqualTo(MemberState.NORMAL);
        assertThat(joining.normalCount()).as("a joining member does not count for from").isEqualTo(3);
        assertThat(done.normalCount()).isEqualTo(4);
    }

    @Test
    void aLeaveEndsWithoutTheMember() {
        Membership leaving = THREE.withLeaving("n2");
        assertThat(ids(leaving.current())).containsExactly("n1", "n2", "n3");
        assertThat(ids(leaving.coming())).containsExactly("n1", "n3");
        assertThat(leaving.normalCount()).isEqualTo(2);
        Membership done = leaving.withReadsFromComing().completed();
        assertThat(ids(done.topology())).containsExactly("n1", "n3");
        assertThat(done.replicationFactor()).as("fixed for the cluster's life, even above the members").isEqualTo(3);
    }

    @Test
    void aRemovedMemberIsGoneAtOnceAndARemovedJoinerEndsTheChange() {
        assertThat(ids(THREE.withRemoved("n3").topology())).containsExactly("n1", "n2");
        Membership abandoned = THREE.withJoining(N4).withReadsFromComing().withRemoved("n4");
        assertThat(abandoned.inChange()).isFalse();
        assertThat(abandoned.readsFromComing()).isFalse();
    }

    @Test
    void oneChangeAtATimeAndReadsSwitchOnlyDuringOne() {
        assertThatThrownBy(() -> THREE.withJoining(N4).withLeaving("n1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(THREE::withReadsFromComing).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void duringAChangeAWriteNeedsItsQuorumAmongTheCurrentAndAmongTheComingReplicas() {
        Membership joining = THREE.withJoining(N4);
        PlacementPlan plan = new PlacementPlan(joining);
        Placement now = new Placement(joining.current());
        Placement next = new Placement(joining.coming());
        int moved = 0;
        for (int i = 0; i < 200; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            PlacementPlan.WriteTargets targets = plan.writeTargets(key, 3);
            Set<String> current = Set.copyOf(ids(new Topology(now.replicasFor(key, 3))));
            Set<String> coming = Set.copyOf(ids(new Topology(next.replicasFor(key, 3))));
            if (current.equals(coming)) {
                assertThat(targets.groups()).containsExactly(current);
                assertThat(targets.members()).hasSize(3);
            } else {
                moved++;
                assertThat(targets.groups()).containsExactly(current, coming);
                assertThat(targets.members()).as("the union, each once").hasSize(4);
            }
            assertThat(plan.readReplicas(key, 3)).isEqualTo(now.replicasFor(key, 3));
        }
        assertThat(moved).as("keys whose replicas change when a fourth node joins").isGreaterThan(50);
    }

    @Test
    void withoutAChangeTheWriteTargetsAreTheReplicas() {
        PlacementPlan plan = new PlacementPlan(THREE);
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        assertThat(plan.writeTargets(key, 2).groups()).hasSize(1);
        assertThat(plan.writeTargets(key, 2).members()).isEqualTo(plan.readReplicas(key, 2));
    }
}
