package io.kvorum.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.testkit.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The deployments of {@code deploy/}: the Kubernetes manifests validate against the API's schemas
 * (no Kubernetes cluster runs here, so {@code kubernetes-validate} checks them, strictly), and
 * {@code docker-compose up} starts a working three-node cluster of the node image, which a fourth
 * node joins and leaves again, with every write reading back through every node.
 */
class DeploymentIT {

    private static final Path DEPLOY = Path.of(System.getProperty("kvorum.deploy.dir", "../deploy"));
    private static final Duration START_BOUND = Duration.ofSeconds(120);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void theKubernetesManifestsAreValidAndTheValidatorRejectsAWrongOne() throws Exception {
        String validator = System.getenv("KVORUM_K8S_VALIDATE");
        assertThat(validator).as("KVORUM_K8S_VALIDATE names the schema validator; ./kvorum test installs it").isNotBlank();
        List<Path> manifests;
        try (Stream<Path> files = Files.list(DEPLOY.resolve("k8s"))) {
            manifests = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
        }
        assertThat(manifests).isNotEmpty();
        for (Path manifest : manifests) {
            Result r = run(List.of(validator, "--strict", manifest.toString()), Map.of(), Duration.ofSeconds(60));
            assertThat(r.exit()).as(manifest + ": " + r.output()).isZero();
            for (String kind : List.of("service/kvorum", "statefulset/kvorum", "poddisruptionbudget/kvorum")) {
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

    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void composeStartsAThreeNodeClusterThatAFourthNodeJoinsAndLeaves() throws Exception {
        int[] ports = Ports.freePorts(4);
        Map<String, String> env = new HashMap<>();
        env.put("KVORUM_IMAGE", NodeImage.name());
        for (int i = 0; i < 4; i++) {
            env.put("KVORUM_PORT_N" + (i + 1), Integer.toString(ports[i]));
        }
        String project = "kvorum-it-" + ProcessHandle.current().pid();
        List<String> compose = List.of("docker-compose", "-p", project, "-f", DEPLOY.resolve("docker-compose.yml").toString());
        try {
            compose(compose, env, "up", "-d");
            for (int i = 0; i < 3; i++) {
                awaitStatus(ports[i]);
            }
            Map<String, String> written = new HashMap<>();
            for (int i = 0; i < 100; i++) {
                String key = "compose-" + i;
                assertThat(send(ports[i % 3], "PUT", "/v0/entity?id=" + key, "v" + i).statusCode()).isEqualTo(201);
                written.put(key, "v" + i);
            }

            compose(compose, env, "--profile", "grow", "up", "-d", "n4");
            Await.until("n4 normal in n1's membership", START_BOUND, () -> "normal".equals(stateOf(ports[0], "n4")));
            awaitStatus(ports[3]);
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
        }
    }

    private static void assertEveryKeyReadsBack(int[] ports, Map<String, String> written) throws Exception {
        for (int port : ports) {
            for (Map.Entry<String, String> e : written.entrySet()) {
                HttpResponse<String> r = send(port, "GET", "/v0/entity?id=" + e.getKey(), null);
                assertThat(r.statusCode()).as(e.getKey() + " via port " + port).isEqualTo(200);
                assertThat(r.body()).isEqualTo(e.getValue());
            }
        }
    }

    private static String stateOf(int port, String member) {
        return MemberStates.stateOf(URI.create("http://127.0.0.1:" + port), member);
    }

    private static void awaitStatus(int port) {
        awaitStatus(port, 200);
    }

    /** Polls (bounded) until the node on {@code port} answers {@code GET /v0/status} with {@code code}. */
    private static void awaitStatus(int port, int code) {
        Await.until("the node on port " + port + " answers /v0/status " + code, START_BOUND, () -> {
            try {
                return send(port, "GET", "/v0/status", null).statusCode() == code;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    private static HttpResponse<String> send(int port, String method, String path, String body)
            throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
                .build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
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
