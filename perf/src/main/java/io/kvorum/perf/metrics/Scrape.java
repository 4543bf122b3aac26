package io.kvorum.perf.metrics;

import io.kvorum.testkit.PrometheusText;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One node's {@code /metrics} at one instant, as the scraper read it.
 *
 * @param epochMillis when the answer arrived (the scraper's clock)
 * @param samples     every sample line of the answer
 */
public record Scrape(long epochMillis, List<PrometheusText.Sample> samples) {

    public Scrape {
        samples = List.copyOf(samples);
    }

    /** The samples named {@code name}, by their label set (one series each). */
    public Map<Map<String, String>, PrometheusText.Sample> series(String name) {
        Map<Map<String, String>, PrometheusText.Sample> series = new LinkedHashMap<>();
        for (PrometheusText.Sample s : samples) {
            if (s.name().equals(name)) {
                series.put(s.labels(), s);
            }
        }
        return series;
    }
}
