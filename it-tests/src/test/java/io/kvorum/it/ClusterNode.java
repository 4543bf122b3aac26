package io.kvorum.it;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.InternalServerErrorException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.github.dockerjava.api.model.Ulimit;
import io.kvorum.client.KvorumClient;
import io.kvorum.client.RetryPolicy;
import io.kvorum.client.TrustedCa;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.Readiness;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One node of a {@link KvorumCluster}: a container of the node image on the cluster's two
 * networks. Tests reach it only at {@link #uri()}, {@code 127.0.0.1} and a host port fixed for the
 * node's whole life, so clients stay valid across restarts. Its peers reach it on the cluster's
 * private network under its network alias (its id, {@code n1}...) at a fixed address.
 *
 * <p>The faults, each the way production breaks:
 * <ul>
 *   <li>{@link #kill()}: SIGKILL, a crash; {@link #stop()}: SIGTERM, a graceful shutdown;
 *       {@link #start()} starts the same container again, on the same volume;</li>
 *   <li>{@link #pause()}/{@link #unpause()}: the process is frozen (cgroup freezer): its sockets
 *       stay open and accept nothing, like a long GC pause or a hung VM;</li>
 *   <li>{@link #disconnect()}/{@link #reconnect()}: a partition: the node leaves the private network
 *       (its peers cannot reach it, nor it them) but still answers tests on its host port;</li>
 *   <li>{@link #wipe()}: a lost disk: the stopped node gets a new, empty volume.</li>
 * </ul>
 * Not thread-safe: one test thread (or one chaos thread) drives the faults of a node.
 */
public final class ClusterNode {

    static final int HTTP_PORT = 8080;
    static final int GRPC_PORT = 9080;
    /** Where a secured cluster's certificates and token file are mounted ({@link KvorumCluster.Spec#secured}). */
    static final String TLS_MOUNT = "/tls";
    private static final Duration START_BOUND = Duration.ofSeconds(90);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);
    /** Tries of {@code docker pause} when the freezer gives up on a thread in an uninterruptible wait. */
    private static final int PAUSE_ATTEMPTS = 5;

    private final DockerClient docker;
    private final KvorumCluster cluster;
    private final String id;
    private final String ip;
    private final List<String> env;
    private final StringBuilder earlierLogs = new StringBuilder();
    private int hostPort;
    private String containerName;
    private String containerId;
    private String volume;
    private int incarnation;
    private boolean paused;
    private boolean disconnected;
    private HttpClient probe;

    ClusterNode(DockerClient docker, KvorumCluster cluster, String id, String ip, List<String> env) {
        this.docker = docker;
        this.cluster = cluster;
        this.id = id;
        this.ip = ip;
        this.env = List.copyOf(env);
    }

    /** The node id, which is also its network alias on the peer network. */
    public String id() {
        return id;
    }

    /** {@code http://127.0.0.1:<host port>} ({@code https} for a secured cluster): where tests reach this node. */
    public URI uri() {
        return URI.create((cluster.spec().isSecured() ? "https" : "http") + "://127.0.0.1:" + hostPort);
    }

    /**
     * The node's HTTP port at its address on the cluster's front network, which this machine
     * reaches directly: for tests that open thousands of connections, which Docker's port-forwarding
     * proxy behind {@link #uri()} does not survive (it died under 4,200 at once here).
     */
    public InetSocketAddress directHttpAddress() {
        String ip = inspect().getNetworkSettings().getNetworks().get(cluster.frontNetworkName()).getIpAddress();
        return new InetSocketAddress(ip, HTTP_PORT);
    }

    /**
     * A client of this node whose requests give up after {@code timeout}; for a secured cluster it
     * trusts the cluster's CA and sends its token.
     */
    public KvorumClient client(Duration timeout) {
        KvorumCluster.Spec spec = cluster.spec();
        if (!spec.isSecured()) {
            return KvorumClient.create(uri(), timeout);
        }
        return KvorumClient.builder().endpoints(uri()).requestTimeout(timeout).retryPolicy(RetryPolicy.NONE)
                .trustCertificates(spec.tlsDir().resolve("ca.pem")).bearerToken(spec.token()).build();
    }

    /** A client of this node whose requests give up after 10 s. */
    public KvorumClient client() {
        return client(Duration.ofSeconds(10));
    }

    /** The container's name, for messages and {@code docker} commands. */
    public String containerName() {
        return containerName;
    }

    // ---- lifecycle ------------------------------------------------------------------------------

    /** Creates the volume and the container (not started), on a free host port. */
    void create() {
        volume = volumeName(0);
        docker.createVolumeCmd().withName(volume).withLabels(Docker.labels(cluster.id())).exec();
        createContainer();
    }

    private String volumeName(int generation) {
        return cluster.namePrefix() + "-" + id + "-data" + (generation == 0 ? "" : "-" + generation);
    }

    private void createContainer() {
        hostPort = hostPort == 0 ? io.kvorum.testkit.Ports.freePort() : hostPort;
        containerName = cluster.namePrefix() + "-" + id + (incarnation == 0 ? "" : "-" + incarnation);
        HostConfig host = HostConfig.newHostConfig()
                .withNetworkMode(cluster.frontNetworkName())
                .withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort("127.0.0.1", hostPort),
                        ExposedPort.tcp(HTTP_PORT)))
                .withMounts(mounts())
                // Names the embedded DNS cannot answer (a partitioned peer) go to the container's own
                // loopback, where nothing listens: no lookup ever leaves the machine.
                .withDns("127.0.0.1");
        long tmpfs = cluster.spec().dataTmpfsBytes();
        if (tmpfs > 0) {
            // Owned by the image's user: Docker 20.10 ignores a tmpfs mode, and the default is root's 0755.
            host.withTmpFs(Map.of("/data", "size=" + tmpfs + ",uid=10001,gid=10001"));
        }
        int files = cluster.spec().openFileLimit();
        if (files > 0) {
            host.withUlimits(List.of(new Ulimit("nofile", (long) files, (long) files)));
        }
        containerId = docker.createContainerCmd(cluster.image())
                .withName(containerName)
                .withLabels(Docker.labels(cluster.id()))
                .withEnv(env)
                .withExposedPorts(ExposedPort.tcp(HTTP_PORT), ExposedPort.tcp(GRPC_PORT))
                .withHostConfig(host)
                .exec().getId();
        connectPeerNetwork();
    }

    /** The data volume, for a secured cluster its certificates, read-only, and the spec's shared volumes. */
    private List<Mount> mounts() {
        List<Mount> mounts = new ArrayList<>();
        if (cluster.spec().dataTmpfsBytes() == 0) {
            mounts.add(new Mount().withType(MountType.VOLUME).withSource(volume).withTarget("/data"));
        }
        if (cluster.spec().isSecured()) {
            mounts.add(tlsMount());
        }
        cluster.spec().volumes().forEach((target, name) ->
                mounts.add(new Mount().withType(MountType.VOLUME).withSource(name).withTarget(target)));
        return mounts;
    }

    private Mount tlsMount() {
        return new Mount().withType(MountType.BIND).withSource(cluster.spec().tlsDir().toString())
                .withTarget(TLS_MOUNT).withReadOnly(true);
    }

    private void connectPeerNetwork() {
        docker.connectToNetworkCmd().withNetworkId(cluster.peerNetworkId()).withContainerId(containerId)
                .withContainerNetwork(new ContainerNetwork().withAliases(id)
                        .withIpamConfig(new ContainerNetwork.Ipam().withIpv4Address(ip)))
                .exec();
    }

    /** Starts the container without waiting for the node to serve. */
    void startContainer() {
        try {
            docker.startContainerCmd(containerId).exec();
        } catch (RuntimeException e) {
            if (incarnation == 0 && String.valueOf(e.getMessage()).contains("already allocated")) {
                // The free port was taken between the probe and the start: move to another one.
                docker.removeContainerCmd(containerId).withForce(true).exec();
                hostPort = io.kvorum.testkit.Ports.freePort();
                createContainer();
                docker.startContainerCmd(containerId).exec();
            } else {
                throw e;
            }
        }
    }

    /**
     * Starts the node again after {@link #kill()}, {@link #stop()} or {@link #wipe()}, on the same
     * volume (a new one after a wipe), and waits until it serves.
     */
    public void start() {
        if (isRunning()) {
            throw new IllegalStateException(id + " is already running");
        }
        startContainer();
        awaitServing();
    }

    /** Waits until {@code GET /v0/status} answers 200; fails at once if the node exits. */
    void awaitServing() {
        Readiness.awaitStatus200(probe(), id, URI.create(uri() + "/v0/status"), START_BOUND, () -> {
            if (!isRunning()) {
                throw new AssertionError(id + " exited with " + exitCode() + " while starting:\n" + tail(40));
            }
        }, () -> tail(40));
    }

    /** Whether {@code GET /v0/status} answers 200 within a second (over HTTPS, trusting the CA, when secured). */
    public boolean isServing() {
        return Readiness.answers200(probe(), URI.create(uri() + "/v0/status"), Duration.ofSeconds(1));
    }

    /** The client of the readiness probes: over HTTPS, trusting the cluster's CA, when it is secured; made on first use. */
    private synchronized HttpClient probe() {
        if (probe == null) {
            HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Readiness.PROBE_TIMEOUT);
            if (cluster.spec().isSecured()) {
                try {
                    builder.sslContext(TrustedCa.clientContext(cluster.spec().tlsDir().resolve("ca.pem")));
                } catch (IOException | GeneralSecurityException e) {
                    throw new IllegalStateException("cannot trust the CA in " + cluster.spec().tlsDir(), e);
                }
            }
            probe = builder.build();
        }
        return probe;
    }

    /** SIGKILL: a crash. Returns once the process is gone. */
    public void kill() {
        requireNotPaused("kill");
        docker.killContainerCmd(containerId).withSignal("KILL").exec();
        awaitExited();
    }

    /**
     * SIGTERM, then waits for the node to exit ({@code docker stop}, which sends SIGKILL after 20 s).
     *
     * @return the exit code (0 for a clean shutdown, docs/operations.md#starting-nodes)
     */
    public int stop() {
        requireNotPaused("stop");
        docker.stopContainerCmd(containerId).withTimeout((int) STOP_TIMEOUT.toSeconds()).exec();
        awaitExited();
        return exitCode();
    }

    private void awaitExited() {
        Await.until(id + " to exit", STOP_TIMEOUT.plusSeconds(10), () -> !isRunning());
    }

    /**
     * Freezes the process (cgroup freezer); the node neither answers nor times anything out. The
     * freezer gives up when a thread stays in an uninterruptible wait (a write to disk) past runc's
     * short bound, which a loaded machine makes likely: runc then thaws the container and Docker
     * answers 500 "unable to freeze" (HistoryIT, 5 nodes, once in CI). That is retried, a bounded
     * number of times; any other refusal is not.
     */
    public void pause() {
        for (int attempt = 1; ; attempt++) {
            try {
                docker.pauseContainerCmd(containerId).exec();
                break;
            } catch (InternalServerErrorException e) {
                if (attempt >= PAUSE_ATTEMPTS || !String.valueOf(e.getMessage()).contains("unable to freeze")) {
                    throw e;
                }
                System.out.println("[kvorum-it] " + id + ": the freezer gave up (attempt " + attempt + "); trying again");
                Await.pause(100L * attempt); // a backoff: the disk write it waited on has time to end
            }
        }
        paused = true;
    }

    public void unpause() {
        docker.unpauseContainerCmd(containerId).exec();
        paused = false;
    }

    /** Partitions the node away: it leaves the private network, keeping its host port for tests. */
    public void disconnect() {
        docker.disconnectFromNetworkCmd().withNetworkId(cluster.peerNetworkId()).withContainerId(containerId)
                .withForce(true).exec();
        disconnected = true;
    }

    /** Heals the partition: the node rejoins under the same alias and address. */
    public void reconnect() {
        connectPeerNetwork();
        disconnected = false;
    }

    /**
     * A lost disk: the node, which must be stopped or killed, gets a new, empty volume. Its old
     * container (whose logs are kept for {@link #logs()}) and volume are removed. {@link #start()} it
     * afterwards.
     */
    public void wipe() {
        if (isRunning()) {
            throw new IllegalStateException("stop or kill " + id + " before wiping its data");
        }
        earlierLogs.append(Docker.logs(docker, containerId));
        docker.removeContainerCmd(containerId).withForce(true).exec();
        docker.removeVolumeCmd(volume).exec();
        incarnation++;
        volume = volumeName(incarnation);
        docker.createVolumeCmd().withName(volume).withLabels(Docker.labels(cluster.id())).exec();
        createContainer();
    }

    private void requireNotPaused(String what) {
        if (paused) {
            throw new IllegalStateException("unpause " + id + " before " + what);
        }
    }

    // ---- state ----------------------------------------------------------------------------------

    public boolean isRunning() {
        InspectContainerResponse.ContainerState state = inspect().getState();
        return Boolean.TRUE.equals(state.getRunning());
    }

    public boolean isPaused() {
        return paused;
    }

    public boolean isDisconnected() {
        return disconnected;
    }

    /** Up, unpaused and on the network: what a peer can talk to. */
    public boolean isLive() {
        return !paused && !disconnected && isRunning();
    }

    /** The exit code of the last run (137 after {@link #kill()}). */
    public int exitCode() {
        Long code = inspect().getState().getExitCodeLong();
        return code == null ? -1 : code.intValue();
    }

    /** The image's HEALTHCHECK verdict: starting, healthy or unhealthy. */
    public String health() {
        InspectContainerResponse.ContainerState state = inspect().getState();
        return state.getHealth() == null ? "none" : state.getHealth().getStatus();
    }

    InspectContainerResponse inspect() {
        return docker.inspectContainerCmd(containerId).exec();
    }

    /** Runs {@code command} in the running container (its image has bash and few tools) and returns its exit code. */
    public int exec(String... command) {
        return run(Duration.ofSeconds(60), command).exit();
    }

    /** What a command run in the container gave: its exit code, and its stdout and stderr as written. */
    public record Run(int exit, String output) {
    }

    /**
     * Runs {@code command} in the running container, as the image's user and with the container's
     * environment, and waits at most {@code bound} for it to end.
     */
    public Run run(Duration bound, String... command) {
        String execId = docker.execCreateCmd(containerId).withCmd(command).withAttachStdout(true).withAttachStderr(true)
                .exec().getId();
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        try {
            if (!docker.execStartCmd(execId).exec(new ResultCallback.Adapter<Frame>() {
                @Override
                public void onNext(Frame frame) {
                    synchronized (output) {
                        output.writeBytes(frame.getPayload());
                    }
                }
            }).awaitCompletion(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("'" + String.join(" ", command) + "' in " + containerName + " did not end within "
                        + bound.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        Long code = docker.inspectExecCmd(execId).exec().getExitCodeLong();
        synchronized (output) {
            return new Run(code == null ? -1 : code.intValue(), output.toString(StandardCharsets.UTF_8));
        }
    }

    /** Everything the node wrote to stdout and stderr, across restarts and wipes. */
    public String logs() {
        return earlierLogs + Docker.logs(docker, containerId);
    }

    /** The last {@code lines} lines of {@link #logs()}. */
    public String tail(int lines) {
        String[] all = logs().split("\n");
        return String.join("\n", java.util.Arrays.copyOfRange(all, Math.max(0, all.length - lines), all.length));
    }

    /** Removes the container and its volume; safe to call more than once. */
    void remove() {
        if (containerId == null) {
            return;
        }
        if (paused) {
            Docker.quietly(this::unpause);
        }
        Docker.quietly(() -> docker.removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec());
        Docker.quietly(() -> {
            try {
                docker.removeVolumeCmd(volume).exec();
            } catch (NotFoundException gone) {
                // removed with the container
            }
        });
        containerId = null;
    }

    /** What a failure message needs: id, container, state. */
    @Override
    public String toString() {
        List<String> flags = new ArrayList<>();
        if (paused) {
            flags.add("paused");
        }
        if (disconnected) {
            flags.add("partitioned");
        }
        return id + " (" + containerName + ", " + uri() + (flags.isEmpty() ? "" : ", " + String.join(", ", flags)) + ")";
    }
}
