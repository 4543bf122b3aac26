package io.kvorum.it;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts clusters for a test and always removes them afterwards, whatever the outcome. When the
 * test failed it first writes every node's full log under
 * {@code target/failsafe-reports/kvorum-logs/<test>/} and prints the last lines of each to stdout,
 * which failsafe attaches to the failed test in its report. It also prints each test's time.
 *
 * <pre>{@code
 * @RegisterExtension final ClusterExtension clusters = new ClusterExtension();
 * ...
 * KvorumCluster cluster = clusters.start(KvorumCluster.withNodes(3));
 * }</pre>
 */
public final class ClusterExtension implements BeforeEachCallback, AfterEachCallback {

    private static final int TAIL_LINES = 150;
    private final List<KvorumCluster> clusters = new ArrayList<>();
    private final List<String> volumes = new ArrayList<>();
    private long startedNanos;

    /** Starts a cluster that lives until the end of the current test. */
    public KvorumCluster start(KvorumCluster.Spec spec) {
        long t = System.nanoTime();
        KvorumCluster cluster = KvorumCluster.start(spec);
        clusters.add(cluster);
        System.out.printf("[kvorum-it] %d nodes up and connected in %.1f s%n", spec.size(), (System.nanoTime() - t) / 1e9);
        return cluster;
    }

    /**
     * Creates a named volume that lives until the end of the current test, after its clusters are
     * removed: for {@link KvorumCluster.Spec#volume}, to outlive a cluster.
     */
    public String volume(String purpose) {
        String name = String.format("kvorum-it-%s-%06x", purpose, ThreadLocalRandom.current().nextInt(1 << 24));
        Docker.client().createVolumeCmd().withName(name).withLabels(Docker.labels(name)).exec();
        volumes.add(name);
        return name;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        startedNanos = System.nanoTime();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        String method = context.getRequiredTestMethod().getName();
        String display = context.getDisplayName();
        String test = context.getRequiredTestClass().getSimpleName() + "." + method
                + (display.startsWith(method + "(") ? "" : " [" + display + "]");
        try {
            if (context.getExecutionException().isPresent()) {
                for (int i = 0; i < clusters.size(); i++) {
                    reportLogs(clusters.get(i), test + (clusters.size() > 1 ? "-cluster" + (i + 1) : ""));
                }
            }
        } finally {
            clusters.forEach(KvorumCluster::close);
            clusters.clear();
            volumes.forEach(v -> Docker.quietly(() -> Docker.client().removeVolumeCmd(v).exec()));
            volumes.clear();
            System.out.printf("[kvorum-it] %s %s in %.1f s%n", test,
                    context.getExecutionException().isPresent() ? "FAILED" : "passed", (System.nanoTime() - startedNanos) / 1e9);
        }
    }

    private static void reportLogs(KvorumCluster cluster, String test) {
        String base = System.getProperty("kvorum.logs.dir", "target/failsafe-reports/kvorum-logs");
        Path dir = Path.of(base, test.replaceAll("[^A-Za-z0-9._=,-]", "_"));
        try {
            List<Path> files = cluster.writeLogs(dir);
            System.out.println("[kvorum-it] node logs of the failed test: " + files);
        } catch (Exception e) {
            System.out.println("[kvorum-it] could not write node logs: " + e);
        }
        for (ClusterNode node : cluster.nodes()) {
            try {
                System.out.println("----- last " + TAIL_LINES + " log lines of " + node + " -----");
                System.out.println(node.tail(TAIL_LINES));
            } catch (RuntimeException e) {
                System.out.println("(logs of " + node.id() + " unavailable: " + e + ")");
            }
        }
    }
}
