package io.kvorum.perf.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The monitoring that {@code deploy/docker-compose.yml} starts with {@code --profile monitoring} fits
 * together: Prometheus scrapes every node service of the file over HTTPS with the CA and a token
 * mounted into it (and {@code promtool}, which {@code ./kvorum test} installs, accepts its config),
 * Grafana gets the data source every panel of {@code ops/grafana/kvorum.json} names and a provider
 * whose folder holds the dashboard, and every file the two mount is in the repository. Images cannot
 * be pulled here, so this reads the files rather than starting the containers.
 */
class MonitoringFilesTest {

    private static final String PROMETHEUS_CONFIG = "/etc/prometheus/prometheus.yml";
    private static final String DATASOURCES = "/etc/grafana/provisioning/datasources";
    private static final String DASHBOARD_PROVIDERS = "/etc/grafana/provisioning/dashboards";

    @Test
    void monitoringStartsOnlyWithItsProfile() throws IOException {
        Map<String, Map<String, Object>> services = services();
        assertThat(services).containsKeys("prometheus", "grafana", "n1", "n2", "n3");
        for (String name : List.of("prometheus", "grafana")) {
            assertThat(services.get(name).get("profiles")).as("profiles of %s", name).isEqualTo(List.of("monitoring"));
        }
        for (String node : nodeServices().keySet()) {
            assertThat(String.valueOf(services.get(node).get("profiles"))).as("profiles of %s", node).doesNotContain("monitoring");
        }
    }

    @Test
    void everyFileTheMonitoringMountsIsInTheRepository() throws IOException {
        for (String name : List.of("prometheus", "grafana")) {
            for (String[] mount : bindMounts(name)) {
                Path source = deploy().resolve(mount[0]).normalize();
                assertThat(source).as("%s mounts %s", name, mount[0]).startsWith(GrafanaDashboardTest.repositoryRoot()).exists();
            }
        }
    }

    @Test
    void prometheusScrapesEveryNodeOverHttpsWithTheMountedCaAndToken() throws IOException {
        Map<String, Object> job = scrapeJob(prometheusConfig());
        assertThat(job.get("metrics_path")).isEqualTo("/metrics");
        assertThat(job.get("scheme")).isEqualTo("https");

        Set<String> secrets = new TreeSet<>();
        for (Object secret : list(services().get("prometheus").get("secrets"))) {
            secrets.add("/run/secrets/" + ((Map<?, ?>) secret).get("target"));
        }
        assertThat(secrets).as("secrets of the prometheus service")
                .contains(String.valueOf(map(job.get("tls_config")).get("ca_file")),
                        String.valueOf(map(job.get("authorization")).get("credentials_file")));
        assertThat(map(job.get("authorization")).get("type")).isEqualTo("Bearer");

        Set<String> nodes = new TreeSet<>();
        nodeServices().forEach((name, service) -> nodes.add(service.get("hostname") + ":8080"));
        Set<String> targets = new TreeSet<>();
        for (Object staticConfig : list(job.get("static_configs"))) {
            list(map(staticConfig).get("targets")).forEach(t -> targets.add(String.valueOf(t)));
        }
        assertThat(targets).as("the scrape targets against the node services of deploy/docker-compose.yml").isEqualTo(nodes);
    }

    @Test
    void promtoolAcceptsThePrometheusConfig(@TempDir Path dir) throws Exception {
        // The config names the secrets where Compose mounts them; here they are files of dir.
        Files.writeString(dir.resolve("ca.pem"), "", StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("prometheus-token"), "token", StandardCharsets.UTF_8);
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, Files.readString(prometheusConfigFile(), StandardCharsets.UTF_8)
                .replace("/run/secrets/", dir + "/"), StandardCharsets.UTF_8);

        Process check = new ProcessBuilder(promtool().toString(), "check", "config", config.toString())
                .redirectErrorStream(true).start();
        if (!check.waitFor(60, TimeUnit.SECONDS)) {
            check.destroyForcibly();
            fail("promtool check config did not finish within 60 s");
        }
        String said = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(check.exitValue()).as("promtool check config: %s", said).isZero();
    }

    @Test
    void grafanaProvisionsTheDataSourceAndTheDashboardFolder() throws IOException {
        Map<String, Object> datasource = provisionedDatasource();
        assertThat(datasource.get("type")).isEqualTo("prometheus");
        URI url = URI.create(String.valueOf(datasource.get("url")));
        assertThat(services()).as("the service the data source's URL names").containsKey(url.getHost());
        assertThat(list(services().get(url.getHost()).get("ports"))).as("ports of %s", url.getHost())
                .anySatisfy(p -> assertThat(String.valueOf(p)).endsWith(":" + url.getPort()));

        Map<String, Object> provider = map(list(provisioning(DASHBOARD_PROVIDERS, "kvorum.yml").get("providers")).get(0));
        assertThat(provider.get("type")).isEqualTo("file");
        String folder = String.valueOf(map(provider.get("options")).get("path"));
        assertThat(bindMounts("grafana")).as("grafana's mounts").anySatisfy(mount -> {
            assertThat(mount[1]).isEqualTo(folder + "/kvorum.json");
            assertThat(deploy().resolve(mount[0]).normalize()).isEqualTo(GrafanaDashboardTest.repositoryRoot().resolve("ops/grafana/kvorum.json"));
        });
    }

    /** The uid of the data source that Grafana's provisioning sets up. */
    static String provisionedDatasourceUid() throws IOException {
        return String.valueOf(provisionedDatasource().get("uid"));
    }

    private static Map<String, Object> provisionedDatasource() throws IOException {
        List<Object> datasources = list(provisioning(DATASOURCES, "kvorum.yml").get("datasources"));
        assertThat(datasources).hasSize(1);
        return map(datasources.get(0));
    }

    /** A provisioning file, found where the grafana service mounts the folder that holds it. */
    private static Map<String, Object> provisioning(String mountedAt, String file) throws IOException {
        for (String[] mount : bindMounts("grafana")) {
            if (mount[1].equals(mountedAt)) {
                return load(deploy().resolve(mount[0]).resolve(file));
            }
        }
        throw new AssertionError("grafana mounts nothing at " + mountedAt);
    }

    private static Path prometheusConfigFile() throws IOException {
        for (String[] mount : bindMounts("prometheus")) {
            if (mount[1].equals(PROMETHEUS_CONFIG)) {
                return deploy().resolve(mount[0]).normalize();
            }
        }
        throw new AssertionError("prometheus mounts nothing at " + PROMETHEUS_CONFIG);
    }

    private static Map<String, Object> prometheusConfig() throws IOException {
        return load(prometheusConfigFile());
    }

    private static Map<String, Object> scrapeJob(Map<String, Object> config) {
        List<Object> jobs = list(config.get("scrape_configs"));
        assertThat(jobs).as("scrape_configs").hasSize(1);
        return map(jobs.get(0));
    }

    /** The services that run a node: those of the node image, with a KVORUM_NODE_ID. */
    private static Map<String, Map<String, Object>> nodeServices() throws IOException {
        Map<String, Map<String, Object>> nodes = new java.util.TreeMap<>();
        services().forEach((name, service) -> {
            Object environment = service.get("environment");
            if (environment instanceof Map<?, ?> env && env.containsKey("KVORUM_NODE_ID")) {
                nodes.put(name, service);
            }
        });
        assertThat(nodes).as("node services").containsKeys("n1", "n2", "n3", "n4");
        return nodes;
    }

    /** A service's bind mounts, each as {source relative to deploy/, target}. */
    private static List<String[]> bindMounts(String service) throws IOException {
        List<String[]> mounts = new ArrayList<>();
        for (Object volume : list(services().get(service).get("volumes"))) {
            String[] parts = String.valueOf(volume).split(":");
            if (parts[0].startsWith(".") || parts[0].startsWith("/")) {
                mounts.add(new String[] {parts[0], parts[1]});
            }
        }
        assertThat(mounts).as("bind mounts of %s", service).isNotEmpty();
        return mounts;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> services() throws IOException {
        return (Map<String, Map<String, Object>>) (Map<?, ?>) map(load(deploy().resolve("docker-compose.yml")).get("services"));
    }

    private static Path deploy() {
        return GrafanaDashboardTest.repositoryRoot().resolve("deploy");
    }

    private static Map<String, Object> load(Path file) throws IOException {
        assertThat(file).exists();
        return map(new Yaml().load(Files.readString(file, StandardCharsets.UTF_8)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        assertThat(o).isInstanceOf(Map.class);
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o) {
        assertThat(o).isInstanceOf(List.class);
        return (List<Object>) o;
    }

    /** promtool from PATH: Debian's prometheus package, which ./kvorum test installs when it is missing. */
    private static Path promtool() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "promtool");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("promtool is not on PATH: ./kvorum test installs it (apt-get install prometheus)");
    }
}
