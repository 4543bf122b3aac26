package io.kvorum.it;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.Network;
import com.github.dockerjava.api.command.InspectVolumeResponse;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.testcontainers.DockerClientFactory;

/**
 * The Docker engine, through Testcontainers' client, plus the housekeeping that Ryuk would do if
 * it could be pulled here: everything this fixture creates carries {@link #LABEL} and the pid of
 * the test JVM that created it, and leftovers of JVMs that are gone are removed on first use.
 */
final class Docker {

    /** Marks every container, network and volume the fixture creates. */
    static final String LABEL = "io.kvorum.it";
    /** The pid of the JVM that created the resource. */
    static final String OWNER_LABEL = "io.kvorum.it.owner";
    static final String OWNER = Long.toString(ProcessHandle.current().pid());

    private static DockerClient client;

    private Docker() {
    }

    /** The engine's client; fails with one clear sentence when no engine answers. */
    static synchronized DockerClient client() {
        if (client == null) {
            if (!DockerClientFactory.instance().isDockerAvailable()) {
                throw new IllegalStateException("No Docker engine answers, so the integration tests cannot run: "
                        + "use ./kvorum test, which installs and starts one, or start dockerd yourself.");
            }
            client = DockerClientFactory.instance().client();
            removeLeftovers(client);
        }
        return client;
    }

    /** The labels of a resource this JVM creates for cluster {@code clusterId}. */
    static Map<String, String> labels(String clusterId) {
        return Map.of(LABEL, clusterId, OWNER_LABEL, OWNER);
    }

    /** stdout and stderr of a container, as the node wrote them, across all its starts. */
    static String logs(DockerClient docker, String containerId) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            docker.logContainerCmd(containerId).withStdOut(true).withStdErr(true).withFollowStream(false)
                    .exec(new ResultCallback.Adapter<Frame>() {
                        @Override
                        public void onNext(Frame frame) {
                            out.writeBytes(frame.getPayload());
                        }
                    }).awaitCompletion(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            out.writeBytes(("(logs unavailable: " + e + ")\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Removes what earlier test JVMs created and could not remove (killed by a timeout, say). */
    private static void removeLeftovers(DockerClient docker) {
        List<Container> containers = docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(List.of(LABEL)).exec();
        for (Container c : containers) {
            if (isOrphan(c.getLabels())) {
                quietly(() -> docker.removeContainerCmd(c.getId()).withForce(true).withRemoveVolumes(true).exec());
            }
        }
        for (Network n : docker.listNetworksCmd().exec()) {
            if (n.getLabels() != null && n.getLabels().containsKey(LABEL) && isOrphan(n.getLabels())) {
                quietly(() -> docker.removeNetworkCmd(n.getId()).exec());
            }
        }
        List<InspectVolumeResponse> volumes = docker.listVolumesCmd().exec().getVolumes();
        for (InspectVolumeResponse v : volumes == null ? List.<InspectVolumeResponse>of() : volumes) {
            if (v.getLabels() != null && v.getLabels().containsKey(LABEL) && isOrphan(v.getLabels())) {
                quietly(() -> docker.removeVolumeCmd(v.getName()).exec());
            }
        }
    }

    private static boolean isOrphan(Map<String, String> labels) {
        String owner = labels.get(OWNER_LABEL);
        if (owner == null) {
            return true;
        }
        try {
            return ProcessHandle.of(Long.parseLong(owner)).map(p -> !p.isAlive()).orElse(true);
        } catch (NumberFormatException e) {
            return true;
        }
    }

    /** Runs a cleanup step; a failure is reported on stderr and does not stop the other steps. */
    static void quietly(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            System.err.println("[kvorum-it] cleanup step failed: " + e);
        }
    }
}
