package io.kvorum.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import io.kvorum.client.TrustedCa;
import io.kvorum.testkit.Await;
import io.kvorum.testkit.KvorumCerts;
import io.kvorum.testkit.Ports;
import io.kvorum.testkit.Readiness;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.yaml.snakeyaml.Yaml;

/**
 * The deployments of {@code deploy/}, secured by default (docs/operations.md#security): the Kubernetes
 * manifests validate against the API's schemas (no Kubernetes cluster runs here, so
 * {@code kubernetes-validate} checks them, strictly) and say what securing them takes, and
 * {@code docker-compose up} starts a working three-node cluster of the node image over HTTPS, mutual
 * TLS and a bearer token, which a fourth node joins and leaves again, with every write reading back
 * through every node.
 */
class DeploymentIT {

    private static final Path DEPLOY = Path.of(System.getProperty("kvorum.deploy.dir", "../deploy"));
    private static final Duration START_BOUND = Duration.ofSeconds(120);
    /** The Compose scenario's client, trusting its CA, and the token it sends. */
    private HttpClient https;
    private String token;

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void theKubernetesManifestsAreValidAndTheValidatorRejectsAWrongOne() throws Exception {
        String validator = System.getenv("KVORUM_K8S_VALIDATE");
        assertThat(validator).as("KVORUM_K8S_VALIDATE names the schema validator; ./kvorum test installs it").isNotBlank();
        List<Path> manifests = manifests();
        for (Path manifest : manifests) {
            Result r = run(List.of(validator, "--strict", manifest.toString()), Map.of(), Duration.ofSeconds(60));
            assertThat(r.exit()).as(manifest + ": " + r.output()).isZero();
            for (String kind : List.of("service/kvorum", "statefulset/kvorum", "poddisruptionbudget/kvorum", "networkpolicy/kvorum")) {
                assertThat(r.output()).as(manifest.toString()).contains("passed for resource " + kind);
            }
        }
        Path wrong = Files.createTempFile("kvorum-manifest", ".yaml");
        try {
            Files.writeString(wrong, Files.readString(manifests.get(0)).replace("podManagementPolicy:", "podManagmentPolicy:"));
            Result r = run(List.of(validator, "--strict", wrong.toString()), Map.of(), Duration.ofSeconds(60));
            assertThat(r.exit()).as("a misspelt field must fail: " + r.output()).isNotZero();
        } finally {
            Files.deleteIfExists(wrong);
        }
    }

    /**
     * docs/operations.md#security, as the manifests must say it: every container of the pod runs as a
     * non-root user, without privilege escalation or capabilities, under the runtime's seccomp profile,
     * on a read-only root filesystem (with an emptyDir at /tmp, where Netty unpacks its native
     * libraries); TLS files and tokens come from Secrets mounted read-only; the readiness probe
     * speaks HTTPS; no two pods share a Kubernetes node; and a NetworkPolicy lets only the cluster's own
     * pods reach the gRPC port.
     */
    @Test
    void theKubernetesManifestsRunSecuredByDefault() throws Exception {
        List<Map<String, Object>> resources = new ArrayList<>();
        for (Path manifest : manifests()) {
            try (var in = Files.newBufferedReader(manifest)) {
                for (Object document : new Yaml().loadAll(in)) {
                    if (document != null) {
                        resources.add(map(document, manifest.toString()));
                    }
                }
            }
        }
        Map<String, Object> template = at(resource(resources, "StatefulSet", "kvorum"), "spec", "template");
        Map<String, Object> labels = at(template, "metadata", "labels");
        Map<String, Object> pod = at(template, "spec");
        Map<String, Object> podSecurity = at(pod, "securityContext");
        assertThat(pod.get("automountServiceAccountToken")).as("a node never calls the Kubernetes API").isEqualTo(false);

        List<Map<String, Object>> containers = new ArrayList<>(list(pod, "containers"));
        containers.addAll(list(pod, "initContainers"));
        for (Map<String, Object> container : containers) {
            String name = "container " + container.get("name");
            Map<String, Object> security = at(container, "securityContext");
            assertThat(inherited(security, podSecurity, "runAsNonRoot")).as(name + ": runAsNonRoot").isEqualTo(true);
            assertThat(inherited(security, podSecurity, "runAsUser")).as(name + ": runAsUser").isNotNull().isNotEqualTo(0);
            assertThat(security.get("allowPrivilegeEscalation")).as(name + ": allowPrivilegeEscalation").isEqualTo(false);
            assertThat(security.get("readOnlyRootFilesystem")).as(name + ": readOnlyRootFilesystem").isEqualTo(true);
            assertThat(at(security, "capabilities").get("drop")).as(name + ": capabilities dropped").isEqualTo(List.of("ALL"));
            assertThat(at(security, "capabilities")).as(name + ": capabilities added").doesNotContainKey("add");
            assertThat(inherited(security, podSecurity, "seccompProfile")).as(name + ": seccompProfile")
                    .isEqualTo(Map.of("type", "RuntimeDefault"));
            assertThat(security.get("privileged")).as(name + ": privileged").isNotEqualTo(true);
        }

        Map<String, Object> node = list(pod, "containers").stream().filter(c -> "kvorum".equals(c.get("name"))).findFirst()
                .orElseThrow(() -> new AssertionError("no container named kvorum"));
        Map<String, String> env = new HashMap<>();
        for (Map<String, Object> variable : list(node, "env")) {
            env.put((String) variable.get("name"), (String) variable.get("value"));
        }
        for (String option : List.of("KVORUM_TLS_CERT", "KVORUM_TLS_KEY", "KVORUM_TLS_CA", "KVORUM_AUTH_TOKEN_FILE")) {
            assertThat(env.get(option)).as(option).isNotBlank();
            Map<String, Object> mount = mountHolding(node, env.get(option));
            assertThat(mount.get("readOnly")).as(option + " is mounted read-only").isEqualTo(true);
            assertThat(volume(pod, mount)).as(option + " comes from a Secret").containsKey("secret");
        }
        assertThat(volume(pod, mountHolding(node, "/tmp/libnetty_tcnative.so"))).as("a writable /tmp").containsKey("emptyDir");
        assertThat(at(node, "readinessProbe", "httpGet").get("scheme")).as("the readiness probe").isEqualTo("HTTPS");

        assertThat(list(at(pod, "affinity", "podAntiAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"))
                .as("no two pods on one Kubernetes node").anySatisfy(term -> {
                    assertThat(term.get("topologyKey")).isEqualTo("kubernetes.io/hostname");
                    assertThat(at(term, "labelSelector", "matchLabels")).isEqualTo(labels);
                });

        Map<String, Object> policy = at(resource(resources, "NetworkPolicy", "kvorum"), "spec");
        assertThat(at(policy, "podSelector", "matchLabels")).as("the NetworkPolicy selects the pods").isEqualTo(labels);
        assertThat(policy.get("policyTypes")).as("policyTypes").asInstanceOf(InstanceOfAssertFactories.LIST).contains("Ingress");
        List<Map<String, Object>> rules = list(policy, "ingress");
        assertThat(rules).as("every ingress rule names its ports").allSatisfy(rule -> assertThat(list(rule, "ports")).isNotEmpty());
        Map<String, Object> fromTheCluster = Map.of("podSelector", Map.of("matchLabels", labels));
        assertThat(rules).as("the gRPC port is open").anySatisfy(rule -> assertThat(opensGrpc(rule)).isTrue());
        assertThat(rules).as("the gRPC port is open only to the cluster's pods").allSatisfy(rule -> {
            if (opensGrpc(rule)) {
                assertThat(list(rule, "from")).isEqualTo(List.of(fromTheCluster));
            }
        });
    }

    private static List<Path> manifests() throws IOException {
        try (Stream<Path> files = Files.list(DEPLOY.resolve("k8s"))) {
            List<Path> manifests = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
            assertThat(manifests).isNotEmpty();
            return manifests;
        }
    }

    private static boolean opensGrpc(Map<String, Object> rule) {
        return list(rule, "ports").stream().anyMatch(p -> List.of(9080, "grpc").contains(p.get("port")));
    }

    private static Map<String, Object> resource(List<Map<String, Object>> resources, String kind, String name) {
        return resources.stream()
                .filter(r -> kind.equals(r.get("kind")) && name.equals(at(r, "metadata").get("name")))
                .findFirst().orElseThrow(() -> new AssertionError("no " + kind + " named " + name + " in " + DEPLOY.resolve("k8s")));
    }

    /** The container's setting, else the pod's, as Kubernetes resolves the fields both security contexts have. */
    private static Object inherited(Map<String, Object> container, Map<String, Object> pod, String field) {
        return container.containsKey(field) ? container.get(field) : pod.get(field);
    }

    /** The volume mount of {@code container} that {@code path} lies in (the deepest). */
    private static Map<String, Object> mountHolding(Map<String, Object> container, String path) {
        return list(container, "volumeMounts").stream()
                .filter(m -> path.startsWith(m.get("mountPath") + "/"))
                .max(Comparator.comparingInt(m -> ((String) m.get("mountPath")).length()))
                .orElseThrow(() -> new AssertionError(path + " lies in no volume mount of container " + container.get("name")));
    }

    private static Map<String, Object> volume(Map<String, Object> pod, Map<String, Object> mount) {
        return list(pod, "volumes").stream().filter(v -> mount.get("name").equals(v.get("name"))).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + mount.get("name")));
    }

    /** The map at {@code path} under {@code map}; an absent one is empty. */
    private static Map<String, Object> at(Map<String, Object> map, String... path) {
        Map<String, Object> here = map;
        for (String key : path) {
            here = here.containsKey(key) ? map(here.get(key), key) : Map.of();
        }
        return here;
    }

    /** The list of maps at {@code key}; an absent one is empty. */
    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Map<String, Object> map, String key) {
        Object value = map.get(key);
        assertThat(value == null || value instanceof List).as(key + " is a list").isTrue();
        return value == null ? List.of() : (List<Map<String, Object>>) value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value, String what) {
        assertThat(value).as(what + " is a map").isInstanceOf(Map.class);
        return (Map<String, Object>) value;
    }

    /**
     * deploy/docker-compose.yml run as its header says: certificates from {@code ./kvorum certs}, a token
     * file, the node's keys and tokens given to its group. Every node serves HTTPS and wants the token;
     * each container runs as uid 10001 on a read-only root filesystem without capabilities or privilege
     * escalation, and still loads Netty's native libraries (unpacked into its /tmp tmpfs).
     */
    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void composeStartsASecuredThreeNodeClusterThatAFourthNodeJoinsAndLeaves() throws Exception {
        int[] ports = Ports.freePorts(4);
        Path secrets = Files.createTempDirectory("kvorum-compose");
        Path certs = KvorumCerts.make(secrets.resolve("certs"), "n1", "n2", "n3", "n4");
        token = "it-" + UUID.randomUUID();
        String scrapeToken = "it-read-" + UUID.randomUUID();
        // An admin token for the test's writes and membership changes, and a read one for a metrics scrape
        // (docs/operations.md#tokens-and-roles).
        Path tokens = Files.writeString(secrets.resolve("tokens"), token + " admin operator\n" + scrapeToken + " read prometheus\n");
        givenToTheNodesGroup(tokens, certs.resolve("n1.key"), certs.resolve("n2.key"), certs.resolve("n3.key"), certs.resolve("n4.key"));
        https = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
                .sslContext(TrustedCa.clientContext(certs.resolve("ca.pem"))).build();
        Map<String, String> env = new HashMap<>();
        env.put("KVORUM_IMAGE", NodeImage.name());
        env.put("KVORUM_TLS_DIR", certs.toAbsolutePath().toString());
        env.put("KVORUM_AUTH_TOKEN_FILE", tokens.toAbsolutePath().toString());
        for (int i = 0; i < 4; i++) {
            env.put("KVORUM_PORT_N" + (i + 1), Integer.toString(ports[i]));
        }
        String project = "kvorum-it-" + ProcessHandle.current().pid();
        List<String> compose = List.of("docker-compose", "-p", project, "-f", DEPLOY.resolve("docker-compose.yml").toString());
        try {
            compose(compose, env, "up", "-d");
            for (int i = 0; i < 3; i++) {
                awaitStatus(ports[i]);
                assertConfined(compose, env, "n" + (i + 1));
            }
            HttpResponse<String> anonymous = send(ports[0], "PUT", "/v0/entity?id=compose-anonymous", "x", null);
            assertThat(anonymous.statusCode()).as("a write without the token").isEqualTo(401);
            assertThat(send(ports[1], "GET", "/metrics", null, scrapeToken).statusCode()).as("a scrape with the read token")
                    .isEqualTo(200);
            assertThat(send(ports[1], "PUT", "/v0/entity?id=compose-read-only", "x", scrapeToken).statusCode())
                    .as("a write with the read token").isEqualTo(403);
            Map<String, String> written = new HashMap<>();
            for (int i = 0; i < 100; i++) {
                String key = "compose-" + i;
                assertThat(send(ports[i % 3], "PUT", "/v0/entity?id=" + key, "v" + i).statusCode()).isEqualTo(201);
                written.put(key, "v" + i);
            }
            runTheBackupCronJobsCommand(tokens, certs.resolve("ca.pem"), ports[2]);

            compose(compose, env, "--profile", "grow", "up", "-d", "n4");
            Await.until("n4 normal in n1's membership", START_BOUND, () -> "normal".equals(stateOf(ports[0], "n4")));
            awaitStatus(ports[3]);
            assertConfined(compose, env, "n4");
            assertEveryKeyReadsBack(ports, written);

            HttpResponse<String> leave = send(ports[1], "POST", "/v0/cluster/leave?id=n4", null);
            assertThat(leave.statusCode()).as(leave.body()).isEqualTo(202);
            Await.until("n4 gone from every membership", START_BOUND, () -> {
                for (int i = 0; i < 3; i++) {
                    if (!"absent".equals(stateOf(ports[i], "n4"))) {
                        return false;
                    }
                }
                return true;
            });
            awaitStatus(ports[3], 503); // out of rotation: the image's health check wants a 200
            assertEveryKeyReadsBack(new int[] {ports[0], ports[1], ports[2]}, written);
        } finally {
            Result down = run(concat(compose, "--profile", "grow", "down", "-v", "--timeout", "5"), env, Duration.ofMinutes(2));
            if (down.exit() != 0) {
                System.err.println("[kvorum-it] docker-compose down failed: " + down.output());
            }
            deleteRecursively(secrets);
        }
    }

    /**
     * The shell command of the CronJob {@code kvorum-backup} of the Kubernetes manifests, run here with
     * this machine's sh, awk and curl against the Compose cluster: its Secret paths pointed at the
     * test's token file and CA, the client Service at a node's port. It must start a backup (202,
     * the id on stdout), and the backup must complete on the nodes' backup volume.
     */
    private void runTheBackupCronJobsCommand(Path tokens, Path ca, int port) throws Exception {
        Map<String, Object> cronJob = null;
        for (Path manifest : manifests()) {
            try (var in = Files.newBufferedReader(manifest)) {
                for (Object document : new Yaml().loadAll(in)) {
                    Map<String, Object> resource = document == null ? Map.of() : map(document, manifest.toString());
                    if ("CronJob".equals(resource.get("kind")) && "kvorum-backup".equals(at(resource, "metadata").get("name"))) {
                        cronJob = resource;
                    }
                }
            }
        }
        assertThat(cronJob).as("the CronJob kvorum-backup in " + DEPLOY.resolve("k8s")).isNotNull();
        Map<String, Object> container = list(at(cronJob, "spec", "jobTemplate", "spec", "template", "spec"), "containers").get(0);
        assertThat(container.get("command")).isEqualTo(List.of("/bin/sh", "-c"));
        String script = (String) ((List<?>) container.get("args")).get(0);
        Path header = Files.createTempFile("kvorum-cronjob-auth", "");
        try {
            String here = script.replace("/etc/kvorum/auth/tokens", tokens.toAbsolutePath().toString())
                    .replace("/etc/kvorum/tls/ca.pem", ca.toAbsolutePath().toString())
                    .replace("/tmp/auth", header.toString())
                    .replace("https://kvorum-client:8080", "https://127.0.0.1:" + port);
            assertThat(here).as("every path of the pod was replaced").doesNotContain("/etc/kvorum", "kvorum-client");
            Result r = run(List.of("sh", "-c", here), Map.of(), Duration.ofSeconds(60));
            assertThat(r.exit()).as("the CronJob's command: " + r.output()).isZero();
            String id = JsonParser.parseString(r.output()).getAsJsonObject().get("id").getAsString();
            Await.until("backup " + id + " done", START_BOUND, () -> {
                String state = backupState(port, id);
                assertThat(state).as("backup %s", id).isNotEqualTo("failed");
                return state.equals("done");
            });
        } finally {
            Files.deleteIfExists(header);
        }
    }

    private String backupState(int port, String id) {
        try {
            HttpResponse<String> r = send(port, "GET", "/v0/backup/" + id, null);
            assertThat(r.statusCode()).as("GET /v0/backup/%s: %s", id, r.body()).isEqualTo(200);
            return JsonParser.parseString(r.body()).getAsJsonObject().get("state").getAsString();
        } catch (IOException e) {
            return "unreachable: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The container of {@code service} runs as the file says (uid 10001, read-only root filesystem, no
     * capabilities, no-new-privileges) and has Netty's epoll transport and BoringSSL loaded from its
     * /tmp: without a writable, exec /tmp they would be missing, and the node would fall back to NIO
     * and the JDK's TLS without a word.
     */
    private static void assertConfined(List<String> compose, Map<String, String> env, String service) throws Exception {
        Result ps = run(concat(compose, "ps", "-q", service), env, Duration.ofSeconds(60));
        assertThat(ps.exit()).as(ps.output()).isZero();
        String container = ps.output().strip().substring(ps.output().strip().lastIndexOf('\n') + 1);
        Result inspect = run(List.of("docker", "inspect", "--format",
                "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.SecurityOpt}}", container),
                Map.of(), Duration.ofSeconds(60));
        assertThat(inspect.output().strip()).as(service).isEqualTo("10001:10001 true [ALL] [no-new-privileges:true]");
        Result maps = run(List.of("docker", "exec", container, "/bin/bash", "-c",
                "while read -r line; do [[ $line == *netty* ]] && echo \"$line\"; done </proc/1/maps; true"),
                Map.of(), Duration.ofSeconds(60));
        assertThat(maps.output()).as(service + ": Netty's native libraries")
                .contains("/tmp/libnetty_transport_native_epoll", "/tmp/libnetty_tcnative");
    }

    /**
     * As the compose file's header says (chgrp 10001, chmod 640): the node reads its key and the tokens
     * through its group. A test not run as root cannot give files away; it makes this throwaway copy
     * readable to all instead.
     */
    private static void givenToTheNodesGroup(Path... files) throws IOException {
        for (Path file : files) {
            try {
                Files.setAttribute(file, "unix:gid", 10001);
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
            } catch (FileSystemException notRoot) {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
            }
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    private void assertEveryKeyReadsBack(int[] ports, Map<String, String> written) throws Exception {
        for (int port : ports) {
            for (Map.Entry<String, String> e : written.entrySet()) {
                HttpResponse<String> r = send(port, "GET", "/v0/entity?id=" + e.getKey(), null);
                assertThat(r.statusCode()).as(e.getKey() + " via port " + port).isEqualTo(200);
                assertThat(r.body()).isEqualTo(e.getValue());
            }
        }
    }

    private String stateOf(int port, String member) {
        return MemberStates.stateOf(https, URI.create("https://127.0.0.1:" + port), token, member);
    }

    private void awaitStatus(int port) {
        awaitStatus(port, 200);
    }

    /** Polls (bounded) until the node on {@code port} answers {@code GET /v0/status} with {@code code}. */
    private void awaitStatus(int port, int code) {
        Readiness.awaitStatus(https, URI.create("https://127.0.0.1:" + port + "/v0/status"), code, START_BOUND);
    }

    /** A request over HTTPS to the node on {@code port}, with the token. */
    private HttpResponse<String> send(int port, String method, String path, String body) throws IOException, InterruptedException {
        return send(port, method, path, body, token);
    }

    /** The same with {@code bearer} as the token, none when null. */
    private HttpResponse<String> send(int port, String method, String path, String body, String bearer)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (bearer != null) {
            request.header("Authorization", "Bearer " + bearer);
        }
        return https.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static void compose(List<String> compose, Map<String, String> env, String... args) throws Exception {
        Result r = run(concat(compose, args), env, Duration.ofMinutes(3));
        assertThat(r.exit()).as(String.join(" ", args) + ": " + r.output()).isZero();
    }

    private static List<String> concat(List<String> head, String... tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(tail));
        return all;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command, Map<String, String> env, Duration bound) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        Path out = Files.createTempFile("kvorum-it-cmd", ".log");
        try {
            Process p = pb.redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                return new Result(-1, command + " did not finish within " + bound.toSeconds() + " s: " + Files.readString(out));
            }
            return new Result(p.exitValue(), Files.readString(out));
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
