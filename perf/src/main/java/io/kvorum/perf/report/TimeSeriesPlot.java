package io.kvorum.perf.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A metric over the measured run as a self-contained SVG, one polyline per series: x is seconds
 * from the run's start (the same axis in every plot of a report, so a spike in one can be matched
 * with the others), y is linear from 0 to a rounded maximum.
 */
public final class TimeSeriesPlot {

    /** One line: a label for the legend and its points (x seconds, y value). */
    public record Line(String label, List<double[]> points) {}

    static final int WIDTH = 860;
    static final int HEIGHT = 300;
    private static final int LEFT = 70;
    private static final int RIGHT = 220;
    private static final int TOP = 36;
    private static final int BOTTOM = 40;
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
            "#17becf", "#7f7f7f", "#bcbd22"};

    private TimeSeriesPlot() {}

    /**
     * @param title    the plot's title
     * @param unit     the y axis label
     * @param lines    the series, in legend order
     * @param xSeconds the length of the x axis (the measured run)
     */
    public static String svg(String title, String unit, List<Line> lines, double xSeconds) {
        double xMax = Math.max(1, xSeconds);
        double yMax = 0;
        for (Line line : lines) {
            for (double[] p : line.points()) {
                if (Double.isFinite(p[1])) {
                    yMax = Math.max(yMax, p[1]);
                }
            }
        }
        yMax = niceCeiling(yMax);
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>\n", LEFT,
                LatencyPlot.escape(title)));
        for (int i = 0; i <= 4; i++) {
            double value = yMax * i / 4;
            double py = py(value, yMax);
            svg.append(LatencyPlot.line(LEFT, py, WIDTH - RIGHT, py, i == 0 ? "#000" : "#ddd"));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", LEFT - 6, py + 4,
                    format(value)));
        }
        double step = xStep(xMax);
        for (double x = 0; x <= xMax + 1e-9; x += step) {
            double px = px(x, xMax);
            svg.append(LatencyPlot.line(px, TOP, px, HEIGHT - BOTTOM, x == 0 ? "#000" : "#eee"));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", px,
                    HEIGHT - BOTTOM + 16, format(x)));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds from the measured run's start</text>\n",
                (LEFT + WIDTH - RIGHT) / 2, HEIGHT - 6));
        svg.append(String.format(Locale.ROOT, "<text x=\"14\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">%s</text>\n",
                (TOP + HEIGHT - BOTTOM) / 2, (TOP + HEIGHT - BOTTOM) / 2, LatencyPlot.escape(unit)));
        for (int i = 0; i < lines.size(); i++) {
            Line l = lines.get(i);
            String color = COLORS[i % COLORS.length];
            List<String> coordinates = new ArrayList<>();
            for (double[] p : l.points()) {
                if (Double.isFinite(p[1]) && p[0] >= 0 && p[0] <= xMax) {
                    coordinates.add(String.format(Locale.ROOT, "%.1f,%.1f", px(p[0], xMax), py(p[1], yMax)));
                }
            }
            svg.append(String.format(Locale.ROOT, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                    + "points=\"%s\"><title>%s</title></polyline>\n", color, String.join(" ", coordinates), LatencyPlot.escape(l.label())));
            int ly = TOP + 8 + 16 * i;
            svg.append(LatencyPlot.line(WIDTH - RIGHT + 15, ly, WIDTH - RIGHT + 40, ly, color).replace("stroke-width=\"1\"", "stroke-width=\"3\""));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>\n", WIDTH - RIGHT + 46, ly + 4,
                    LatencyPlot.escape(l.label())));
        }
        return svg.append("</svg>\n").toString();
    }

    /** The smallest of 1, 2, 2.5, 5 times a power of ten at or above {@code value} (1 for 0). */
    static double niceCeiling(double value) {
        if (!(value > 0)) {
            return 1;
        }
        double decade = Math.pow(10, Math.floor(Math.log10(value)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * decade >= value) {
                return m * decade;
            }
        }
        return 10 * decade;
    }

    private static double xStep(double xMax) {
        return niceCeiling(xMax / 8);
    }

    private static double px(double x, double xMax) {
        return LEFT + (WIDTH - LEFT - RIGHT) * x / xMax;
    }

    private static double py(double y, double yMax) {
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * y / yMax;
    }

    private static String format(double value) {
        return value == 0 ? "0" : new BigDecimal(value).round(new MathContext(3)).stripTrailingZeros().toPlainString();
    }
}
