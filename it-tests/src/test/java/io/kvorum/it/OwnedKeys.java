package io.kvorum.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.client.KvorumClient;
import io.kvorum.client.KvorumClient.Options;
import io.kvorum.client.KvorumException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;

/**
 * Looking at one replica's own data through the HTTP API. A read with {@code ack=1&from=1} asks
 * only the key's first replica (docs/operations.md#how-replicas-converge), so for the keys whose first replica is node X it shows
 * X's local state, with no read repair (one answer) to blur it.
 */
final class OwnedKeys {

    static final Options FIRST_REPLICA_ONLY = Options.quorum(1, 1);

    private OwnedKeys() {
    }

    /**
     * {@code count} keys named {@code prefix<i>} whose first replica is {@code owner}, found while
     * {@code owner} is partitioned away: through it, a first-replica read succeeds exactly when the
     * first replica is the node itself. Leaves {@code owner} partitioned.
     */
    static List<String> firstReplicaKeys(ClusterNode owner, String prefix, int count) {
        owner.disconnect();
        KvorumClient kv = owner.client();
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < count; i++) {
            assertThat(i).as("candidates tried to find %d keys owned by %s", count, owner.id()).isLessThan(count * 40);
            String key = prefix + i;
            try {
                kv.get(key, FIRST_REPLICA_ONLY).join();
                keys.add(key);
            } catch (CompletionException e) {
                if (!(e.getCause() instanceof KvorumException k && k.isNotEnoughReplicas())) {
                    throw e;
                }
            }
        }
        return keys;
    }

    /** The first replica's value of each key, read through {@code via}: null where absent. */
    static List<String> firstReplicaValues(ClusterNode via, List<String> keys) {
        return firstReplicaValues(via, keys, null);
    }

    /**
     * As above, with {@code refused} where the first replica refused the read (504: it is down or
     * rebuilding); null: such a read fails the test.
     */
    static List<String> firstReplicaValues(ClusterNode via, List<String> keys, String refused) {
        KvorumClient kv = via.client();
        List<String> values = new ArrayList<>();
        for (String key : keys) {
            try {
                Optional<byte[]> v = kv.get(key, FIRST_REPLICA_ONLY).join();
                values.add(v.map(b -> new String(b, StandardCharsets.UTF_8)).orElse(null));
            } catch (CompletionException e) {
                if (refused == null || !(e.getCause() instanceof KvorumException k && k.isNotEnoughReplicas())) {
                    throw e;
                }
                values.add(refused);
            }
        }
        return values;
    }
}
