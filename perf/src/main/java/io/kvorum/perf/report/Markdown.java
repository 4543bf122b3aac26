package io.kvorum.perf.report;

import java.util.List;
import java.util.Locale;

/** Small helpers for the Markdown reports: tables and number formats. */
public final class Markdown {

    private Markdown() {}

    public static String table(List<String> header, List<List<String>> rows) {
        StringBuilder out = new StringBuilder();
        out.append("| ").append(String.join(" | ", header)).append(" |\n");
        out.append("|").append("---|".repeat(header.size())).append('\n');
        for (List<String> row : rows) {
            out.append("| ").append(String.join(" | ", row.stream().map(c -> c.replace("|", "\\|")).toList())).append(" |\n");
        }
        return out.toString();
    }

    /** Latency in ms with 3 significant digits, or "–" when unknown. */
    public static String ms(Double value) {
        if (value == null || value.isNaN()) {
            return "–";
        }
        if (value >= 100) {
            return String.format(Locale.ROOT, "%.0f ms", value);
        }
        return String.format(Locale.ROOT, value >= 10 ? "%.1f ms" : value >= 1 ? "%.2f ms" : "%.3f ms", value);
    }

    public static String count(double value) {
        return String.format(Locale.ROOT, "%,.0f", value);
    }

    public static String code(String text) {
        return "```\n" + text + "\n```\n";
    }
}
