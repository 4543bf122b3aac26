package io.kvorum.node.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One {@code GET /metrics} answer, parsed: its samples, and the families its {@code # TYPE} lines
 * declare. Enough of Prometheus' text format 0.0.4 for tests (escapes in label values are kept as
 * written); {@code promtool check metrics} is what checks the format itself.
 */
public record Scrape(List<Sample> samples, Map<String, String> types) {

    /** One line: a series and its value. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    public static Scrape parse(String text) {
        List<Sample> samples = new ArrayList<>();
        Map<String, String> types = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.substring(7).split(" ");
                types.put(parts[0], parts[1]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                samples.add(sample(line));
            }
        }
        return new Scrape(samples, types);
    }

    private static Sample sample(String line) {
        int brace = line.indexOf('{');
        int space = line.indexOf(' ');
        if (brace < 0 || brace > space) {
            return new Sample(line.substring(0, space), Map.of(), value(line.substring(space + 1)));
        }
        Map<String, String> labels = new LinkedHashMap<>();
        int i = brace + 1;
        while (line.charAt(i) != '}') {
            int eq = line.indexOf('=', i);
            String name = line.substring(i, eq);
            StringBuilder value = new StringBuilder();
            int j = eq + 2; // past ="
            while (line.charAt(j) != '"') {
                if (line.charAt(j) == '\\') {
                    value.append(line.charAt(j++));
                }
                value.append(line.charAt(j++));
            }
            labels.put(name, value.toString());
            i = j + 1;
            if (line.charAt(i) == ',') {
                i++;
            }
        }
        return new Sample(line.substring(0, brace), labels, value(line.substring(i + 2)));
    }

    private static double value(String text) {
        String v = text.strip().split(" ")[0]; // a timestamp may follow
        return switch (v) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(v);
        };
    }

    /** The families declared by {@code # TYPE} lines. */
    public Set<String> families() {
        return new TreeSet<>(types.keySet());
    }

    /** The samples named {@code name} whose labels include every one of {@code labels}. */
    public List<Sample> series(String name, Map<String, String> labels) {
        return samples.stream()
                .filter(s -> s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet()))
                .toList();
    }

    /** The sum of {@link #series}' values: 0 when there is none. */
    public double sum(String name, Map<String, String> labels) {
        return series(name, labels).stream().mapToDouble(Sample::value).sum();
    }

    /** Every label value of every sample. */
    public Set<String> labelValues() {
        Set<String> values = new TreeSet<>();
        samples.forEach(s -> values.addAll(s.labels().values()));
        return values;
    }
}
