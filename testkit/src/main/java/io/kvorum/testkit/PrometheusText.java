package io.kvorum.testkit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A reader of the sample lines of Prometheus' text exposition format (version 0.0.4), what a
 * node's {@code GET /metrics} answers: {@code name{label="value",...} value [timestamp]}. Comment,
 * {@code # HELP} and {@code # TYPE} lines and blank lines are skipped; label values may hold the
 * escapes {@code \\}, {@code \"} and {@code \n}; values may be {@code NaN}, {@code +Inf} and
 * {@code -Inf}; a timestamp is ignored (the perf scraper stamps each scrape itself). The one parser of
 * that format in the tests and perf; {@code promtool check metrics} is what checks the format itself.
 *
 * @param samples the sample lines, in order
 * @param types the family each {@code # TYPE} line declares, and its type ({@code counter}, ...)
 */
public record PrometheusText(List<Sample> samples, Map<String, String> types) {

    /** One sample line: a metric name, its labels (sorted by name) and its value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public Sample {
            labels = Collections.unmodifiableMap(new TreeMap<>(labels));
        }

        public String label(String labelName) {
            return labels.get(labelName);
        }
    }

    public PrometheusText {
        samples = List.copyOf(samples);
        types = Collections.unmodifiableMap(new LinkedHashMap<>(types));
    }

    /**
     * Every sample of {@code text}, in order, and its {@code # TYPE} declarations.
     *
     * @throws IllegalArgumentException naming the line number, for a line that is not a sample
     */
    public static PrometheusText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        Map<String, String> types = new LinkedHashMap<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.startsWith("# TYPE ")) {
                String[] declared = line.substring("# TYPE ".length()).strip().split("\\s+");
                if (declared.length == 2) {
                    types.put(declared[0], declared[1]);
                }
                continue;
            }
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                samples.add(sample(line));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("line " + (i + 1) + " is not a Prometheus sample (" + e.getMessage() + "): "
                        + abbreviate(line), e);
            }
        }
        return new PrometheusText(samples, types);
    }

    /** The families declared by {@code # TYPE} lines, sorted. */
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

    private static Sample sample(String line) {
        int pos = 0;
        while (pos < line.length() && line.charAt(pos) != '{' && !Character.isWhitespace(line.charAt(pos))) {
            pos++;
        }
        String name = line.substring(0, pos);
        if (name.isEmpty()) {
            throw new IllegalArgumentException("no metric name");
        }
        Map<String, String> labels = new TreeMap<>();
        if (pos < line.length() && line.charAt(pos) == '{') {
            pos = labels(line, pos + 1, labels);
        }
        String[] rest = line.substring(pos).strip().split("\\s+");
        if (rest.length < 1 || rest.length > 2 || rest[0].isEmpty()) {
            throw new IllegalArgumentException("expected a value and an optional timestamp");
        }
        return new Sample(name, labels, value(rest[0]));
    }

    /** Reads {@code a="x",b="y"}} from {@code pos} into {@code labels}; returns the position after the brace. */
    private static int labels(String line, int pos, Map<String, String> labels) {
        while (true) {
            while (pos < line.length() && (line.charAt(pos) == ',' || line.charAt(pos) == ' ')) {
                pos++;
            }
            if (pos >= line.length()) {
                throw new IllegalArgumentException("unterminated labels");
            }
            if (line.charAt(pos) == '}') {
                return pos + 1;
            }
            int eq = line.indexOf('=', pos);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                throw new IllegalArgumentException("expected name=\"value\" in the labels");
            }
            String labelName = line.substring(pos, eq).strip();
            StringBuilder value = new StringBuilder();
            pos = eq + 2;
            while (true) {
                if (pos >= line.length()) {
                    throw new IllegalArgumentException("unterminated label value");
                }
                char c = line.charAt(pos++);
                if (c == '"') {
                    break;
                }
                if (c == '\\' && pos < line.length()) {
                    char escaped = line.charAt(pos++);
                    value.append(escaped == 'n' ? '\n' : escaped);
                } else {
                    value.append(c);
                }
            }
            labels.put(labelName, value.toString());
        }
    }

    private static double value(String token) {
        return switch (token) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(token);
        };
    }

    private static String abbreviate(String line) {
        return line.length() <= 120 ? line : line.substring(0, 120) + "...";
    }
}
