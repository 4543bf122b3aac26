package io.kvorum.perf.metrics;

import io.kvorum.testkit.PrometheusText;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Every node's scrapes of one measured run.
 *
 * @param scrapes  node id to its scrapes in time order (empty for a node that exposed no metrics)
 * @param problems node id to the first failed scrape's reason (absent for nodes never refused)
 */
public record ScrapeLog(Map<String, List<Scrape>> scrapes, Map<String, String> problems) {

    /** No scrapes: the run did not read the nodes' metrics. */
    public static final ScrapeLog NONE = new ScrapeLog(Map.of(), Map.of());

    /** The header of {@link #writeCsv}. */
    public static final String CSV_HEADER = "node,epoch_ms,name,labels,value";

    /** True when at least one node answered at least two scrapes (one interval, the least a rate needs). */
    public boolean hasSeries() {
        return scrapes.values().stream().anyMatch(s -> s.size() >= 2);
    }

    /**
     * Writes the samples of Kvorum's and the known JVM families as CSV, one sample a line:
     * node, epoch ms, name, labels as {@code a=x;b=y} (label values are bounded names, never keys),
     * value. The other JVM families are left out to keep the file small.
     */
    public void writeCsv(Path file) throws IOException {
        StringBuilder csv = new StringBuilder(CSV_HEADER).append('\n');
        scrapes.forEach((node, list) -> {
            for (Scrape scrape : list) {
                for (PrometheusText.Sample s : scrape.samples()) {
                    if (!MetricFamilies.known().contains(MetricFamilies.familyOf(s.name(), MetricFamilies.known()))) {
                        continue;
                    }
                    String labels = s.labels().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                            .collect(Collectors.joining(";"));
                    csv.append(node).append(',').append(scrape.epochMillis()).append(',').append(s.name()).append(',')
                            .append(labels.replace(',', ' ')).append(',').append(s.value())
                            .append('\n');
                }
            }
        });
        Files.writeString(file, csv, StandardCharsets.UTF_8);
    }
}
