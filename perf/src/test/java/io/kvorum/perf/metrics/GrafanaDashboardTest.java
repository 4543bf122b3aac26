package io.kvorum.perf.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard {@code ops/grafana/kvorum.json} provisions from its file (no {@code __inputs};
 * every query on the data source that ops/grafana/provisioning sets up), shows every metric family
 * that docs/http-api.md#get-metrics documents, and names only families a node exports: those of
 * {@code ops/grafana/exported-families.txt}, a list regenerated from a real node's {@code /metrics}
 * (its header says how), which must itself hold every documented family.
 */
class GrafanaDashboardTest {

    /** The data source every query names: the one ops/grafana/provisioning/datasources sets up. */
    static final String DATASOURCE_UID = "kvorum-prometheus";

    /** Metric names in a PromQL expression: Kvorum's own and the JVM binders' prefixes. */
    private static final Pattern METRIC = Pattern.compile("\\b((?:kvorum|jvm|process|system)_[a-zA-Z0-9_]+)");

    @Test
    void everyMetricTheDashboardUsesIsExported() throws IOException {
        Set<String> exported = exportedFamilies();
        Set<String> used = new TreeSet<>();
        for (String expr : expressions(dashboard())) {
            used.addAll(families(expr, exported));
        }

        assertThat(used).as("families named by the dashboard").contains(MetricFamilies.REQUESTS, MetricFamilies.REQUEST_DURATION,
                MetricFamilies.JVM_GC_PAUSE);
        assertThat(exported).as("ops/grafana/exported-families.txt").containsAll(used);
    }

    @Test
    void theDashboardShowsEveryDocumentedFamily() throws IOException {
        Set<String> documented = documentedFamilies();
        Set<String> used = new TreeSet<>();
        for (String expr : expressions(dashboard())) {
            used.addAll(families(expr, exportedFamilies()));
        }
        for (String family : documented) {
            if (family.endsWith("_*")) {
                String prefix = family.substring(0, family.length() - 1);
                assertThat(used).as("a panel of a %s family", family).anyMatch(f -> f.startsWith(prefix));
            } else {
                assertThat(used).as("families the dashboard shows, against docs/http-api.md#get-metrics").contains(family);
            }
        }
    }

    @Test
    void theExportedFamiliesHoldEveryDocumentedFamily() throws IOException {
        Set<String> named = new TreeSet<>(documentedFamilies());
        named.removeIf(f -> f.endsWith("_*"));
        assertThat(exportedFamilies()).as("ops/grafana/exported-families.txt against docs/http-api.md#get-metrics")
                .containsAll(named);
    }

    @Test
    void everyDatasourceIsTheProvisionedOne() throws IOException {
        List<String> uids = new ArrayList<>();
        collectDatasourceUids(dashboard(), uids);
        assertThat(uids).as("datasources of the panels, targets and variables").isNotEmpty().containsOnly(DATASOURCE_UID);
        assertThat(MonitoringFilesTest.provisionedDatasourceUid()).as("the uid Grafana's provisioning gives Prometheus")
                .isEqualTo(DATASOURCE_UID);
    }

    @Test
    void theExportedFamiliesHoldEverySpecFamily() throws IOException {
        assertThat(exportedFamilies()).as("ops/grafana/exported-families.txt against docs/operations.md#metrics")
                .containsAll(MetricFamilies.SPEC);
    }

    @Test
    void theDashboardShowsEveryAreaOfTheIssue() throws IOException {
        Set<String> used = new TreeSet<>();
        for (String expr : expressions(dashboard())) {
            used.addAll(families(expr, MetricFamilies.known()));
        }
        assertThat(used).as("every SPEC family has a panel").containsAll(MetricFamilies.SPEC);
        assertThat(used).contains("jvm_memory_used_bytes", "jvm_threads_live_threads", "process_cpu_usage");
    }

    @Test
    void everyPanelHasATitleADatasourceAndAnExpression() throws IOException {
        JsonObject dashboard = dashboard();
        assertThat(dashboard.get("schemaVersion").getAsInt()).isBetween(36, 41);
        assertThat(dashboard.has("__inputs")).as("__inputs, which file provisioning cannot fill in").isFalse();
        assertThat(dashboard.getAsJsonObject("templating").getAsJsonArray("list")).anySatisfy(v ->
                assertThat(v.getAsJsonObject().get("name").getAsString()).isEqualTo("instance"));

        List<JsonObject> panels = graphPanels(dashboard);
        assertThat(panels).hasSizeGreaterThanOrEqualTo(10);
        Set<Integer> ids = new TreeSet<>();
        for (JsonObject panel : panels) {
            String title = panel.has("title") ? panel.get("title").getAsString() : "";
            assertThat(title).as("a panel's title").isNotBlank();
            assertThat(ids.add(panel.get("id").getAsInt())).as("id of %s is unique", title).isTrue();
            assertThat(panel.getAsJsonObject("datasource").get("uid").getAsString()).as("datasource of %s", title)
                    .isEqualTo(DATASOURCE_UID);
            JsonArray targets = panel.getAsJsonArray("targets");
            assertThat(targets).as("targets of %s", title).isNotNull().isNotEmpty();
            for (JsonElement target : targets) {
                assertThat(target.getAsJsonObject().get("expr").getAsString()).as("an expression of %s", title)
                        .isNotBlank().contains("$instance");
            }
        }
    }

    @Test
    void familiesStripHistogramSuffixesOnlyOfHistograms() {
        Set<String> known = Set.of("kvorum_request_duration_seconds", "jvm_gc_pause_seconds", "kvorum_requests_total");

        assertThat(families("histogram_quantile(0.99, sum by (le) (rate(kvorum_request_duration_seconds_bucket[1m])))", known))
                .containsExactly("kvorum_request_duration_seconds");
        assertThat(families("max(jvm_gc_pause_seconds_max) + rate(jvm_gc_pause_seconds_sum[1m])", known))
                .containsExactly("jvm_gc_pause_seconds");
        assertThat(families("rate(kvorum_requests_total_count[1m])", known)).as("not a histogram: left as it is, unknown")
                .containsExactly("kvorum_requests_total_count");
        assertThat(families("rate(kvorum_request_duration_seconds_total[1m])", known)).containsExactly("kvorum_request_duration_seconds_total");
    }

    /** The families named in a PromQL expression, by {@link MetricFamilies#familyOf} against {@code known}. */
    static Set<String> families(String expr, Set<String> known) {
        Set<String> families = new TreeSet<>();
        Matcher m = METRIC.matcher(expr);
        while (m.find()) {
            families.add(MetricFamilies.familyOf(m.group(1), known));
        }
        return families;
    }

    /** The families listed in {@code ops/grafana/exported-families.txt} (lines that are not comments). */
    static Set<String> exportedFamilies() throws IOException {
        return Files.readAllLines(repositoryRoot().resolve("ops/grafana/exported-families.txt"), StandardCharsets.UTF_8).stream()
                .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * The families of docs/http-api.md's metrics table (header {@code family | type | labels | what}):
     * every name in backticks of a row's first cell; {@code jvm_*} and {@code process_*} as such.
     */
    static Set<String> documentedFamilies() throws IOException {
        Set<String> families = new TreeSet<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(repositoryRoot().resolve("docs/http-api.md"), StandardCharsets.UTF_8)) {
            String trimmed = line.strip();
            if (trimmed.replace(" ", "").equals("|family|type|labels|what|")) {
                inTable = true;
            } else if (inTable && !trimmed.startsWith("|")) {
                break;
            } else if (inTable && !trimmed.startsWith("|---")) {
                String first = trimmed.substring(1, trimmed.indexOf('|', 1));
                Matcher name = Pattern.compile("`([a-z_]+\\*?)`").matcher(first);
                while (name.find()) {
                    families.add(name.group(1));
                }
            }
        }
        assertThat(families).as("the metrics table of docs/http-api.md").contains(MetricFamilies.REQUESTS, "jvm_*");
        return families;
    }

    private static void collectDatasourceUids(JsonElement element, List<String> uids) {
        if (element.isJsonObject()) {
            for (var entry : element.getAsJsonObject().entrySet()) {
                if (entry.getKey().equals("datasource") && entry.getValue().isJsonObject()) {
                    uids.add(entry.getValue().getAsJsonObject().get("uid").getAsString());
                } else {
                    collectDatasourceUids(entry.getValue(), uids);
                }
            }
        } else if (element.isJsonArray()) {
            element.getAsJsonArray().forEach(e -> collectDatasourceUids(e, uids));
        }
    }

    static JsonObject dashboard() throws IOException {
        return JsonParser.parseString(Files.readString(repositoryRoot().resolve("ops/grafana/kvorum.json"), StandardCharsets.UTF_8))
                .getAsJsonObject();
    }

    /** Every panel but rows, also those nested in collapsed rows. */
    private static List<JsonObject> graphPanels(JsonObject dashboard) {
        List<JsonObject> out = new ArrayList<>();
        for (JsonElement element : dashboard.getAsJsonArray("panels")) {
            JsonObject panel = element.getAsJsonObject();
            if ("row".equals(panel.get("type").getAsString())) {
                if (panel.has("panels")) {
                    panel.getAsJsonArray("panels").forEach(p -> out.add(p.getAsJsonObject()));
                }
            } else {
                out.add(panel);
            }
        }
        return out;
    }

    private static List<String> expressions(JsonObject dashboard) {
        List<String> exprs = new ArrayList<>();
        for (JsonObject panel : graphPanels(dashboard)) {
            panel.getAsJsonArray("targets").forEach(t -> exprs.add(t.getAsJsonObject().get("expr").getAsString()));
        }
        assertThat(exprs).isNotEmpty();
        return exprs;
    }

    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("ops/grafana"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("a folder with ops/grafana above " + Path.of("").toAbsolutePath()).isNotNull();
        return dir;
    }
}
