package io.kvorum.perf.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The latency-by-percentile plot as a self-contained SVG, one line per run: x is the percentile on
 * the scale of log10(1/(1-p)) (so 90%, 99%, 99.9% ... are evenly spaced), y the latency in ms on a
 * log scale. Points at p = 1 (the maximum) cannot be placed on that axis and are left out.
 */
public final class LatencyPlot {

    /** One run's line: points (percentile in 0..1, latency in ms). */
    public record Series(String label, List<Point> points) {}

    public record Point(double percentile, double latencyMs) {}

    static final int WIDTH = 860;
    static final int HEIGHT = 480;
    private static final int LEFT = 70;
    private static final int RIGHT = 220;
    private static final int TOP = 40;
    private static final int BOTTOM = 50;
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
    private static final double[] X_TICKS = {0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999};
    private static final String[] X_LABELS = {"50%", "90%", "99%", "99.9%", "99.99%", "99.999%"};

    private LatencyPlot() {}

    public static String svg(String title, List<Series> series) {
        List<Series> usable = series.stream().map(s -> new Series(s.label(), s.points().stream()
                .filter(p -> p.percentile() >= 0 && p.percentile() < 1 && p.latencyMs() > 0).toList())).toList();
        double xMax = 4;
        double yMin = Double.MAX_VALUE;
        double yMax = 0;
        for (Series s : usable) {
            for (Point p : s.points()) {
                xMax = Math.max(xMax, Math.min(6, Math.ceil(x(p.percentile()))));
                yMin = Math.min(yMin, p.latencyMs());
                yMax = Math.max(yMax, p.latencyMs());
            }
        }
        if (yMax == 0) {
            yMin = 0.1;
            yMax = 10;
        }
        double logMin = Math.floor(Math.log10(yMin));
        double logMax = Math.max(logMin + 1, Math.ceil(Math.log10(yMax)));
        Axes axes = new Axes(xMax, logMin, logMax);

        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>\n", LEFT, escape(title)));
        // grid and axis labels
        for (int i = 0; i < X_TICKS.length; i++) {
            double x = x(X_TICKS[i]);
            if (x > xMax + 1e-9) {
                break;
            }
            double px = axes.px(x);
            svg.append(line(px, TOP, px, HEIGHT - BOTTOM, "#ddd"));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    px, HEIGHT - BOTTOM + 18, X_LABELS[i]));
        }
        for (double decade = logMin; decade <= logMax; decade++) {
            for (int mantissa : new int[] {1, 2, 5}) {
                double value = mantissa * Math.pow(10, decade);
                if (Math.log10(value) > logMax + 1e-9) {
                    break;
                }
                double py = axes.py(value);
                svg.append(line(LEFT, py, WIDTH - RIGHT, py, mantissa == 1 ? "#bbb" : "#eee"));
                svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                        LEFT - 6, py + 4, formatMs(value)));
            }
        }
        svg.append(line(LEFT, HEIGHT - BOTTOM, WIDTH - RIGHT, HEIGHT - BOTTOM, "#000"));
        svg.append(line(LEFT, TOP, LEFT, HEIGHT - BOTTOM, "#000"));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">percentile</text>\n",
                (LEFT + WIDTH - RIGHT) / 2, HEIGHT - 12));
        svg.append(String.format(Locale.ROOT, "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">"
                + "latency (ms, log scale)</text>\n", (TOP + HEIGHT - BOTTOM) / 2, (TOP + HEIGHT - BOTTOM) / 2));
        // one line per run, and its legend entry
        for (int i = 0; i < usable.size(); i++) {
            Series s = usable.get(i);
            String color = COLORS[i % COLORS.length];
            List<String> coordinates = new ArrayList<>();
            for (Point p : s.points()) {
                double x = x(p.percentile());
                if (x <= xMax) {
                    coordinates.add(String.format(Locale.ROOT, "%.1f,%.1f", axes.px(x), axes.py(p.latencyMs())));
                }
            }
            svg.append(String.format(Locale.ROOT, "<polyline class=\"run\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                    + "points=\"%s\"><title>%s</title></polyline>\n", color, String.join(" ", coordinates), escape(s.label())));
            int ly = TOP + 10 + 20 * i;
            svg.append(line(WIDTH - RIGHT + 15, ly, WIDTH - RIGHT + 40, ly, color).replace("stroke-width=\"1\"", "stroke-width=\"3\""));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>\n", WIDTH - RIGHT + 46, ly + 4,
                    escape(s.label())));
        }
        return svg.append("</svg>\n").toString();
    }

    /** The x coordinate of percentile p (0..1): log10(1/(1-p)). */
    static double x(double percentile) {
        return Math.log10(1 / (1 - percentile));
    }

    private record Axes(double xMax, double logMin, double logMax) {
        double px(double x) {
            return LEFT + (WIDTH - LEFT - RIGHT) * x / xMax;
        }

        double py(double ms) {
            return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * (Math.log10(ms) - logMin) / (logMax - logMin);
        }
    }

    static String line(double x1, double y1, double x2, double y2, String color) {
        return String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>\n",
                x1, y1, x2, y2, color);
    }

    private static String formatMs(double ms) {
        return new BigDecimal(ms).round(new MathContext(2)).stripTrailingZeros().toPlainString() + " ms";
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
