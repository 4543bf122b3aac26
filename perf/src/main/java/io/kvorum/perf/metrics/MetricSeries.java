package io.kvorum.perf.metrics;

import io.kvorum.testkit.PrometheusText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Time series derived from one node's successive scrapes, the way Prometheus derives them:
 * counters become per-second rates of their increase between two scrapes (a counter that went
 * down was reset by a restart, and counts from zero: its increase is its new value), histograms
 * become a quantile of the increase of their buckets in each interval ({@code histogram_quantile}
 * over {@code increase(..._bucket)}), and gauges are read as they are.
 *
 * <p>Each point is placed at the later scrape of its interval, in seconds from {@code originMillis}.
 */
public final class MetricSeries {

    /** One point of a series: seconds from the origin, and the value. */
    public record Point(double seconds, double value) {}

    private MetricSeries() {}

    /**
     * Per-second rate of counter {@code name}, summed over its series and grouped by the value of
     * {@code byLabel} (null: one group, keyed ""). Groups are sorted by label value.
     */
    public static Map<String, List<Point>> rate(List<Scrape> scrapes, String name, String byLabel, long originMillis) {
        Map<String, List<Point>> groups = new TreeMap<>();
        for (int i = 1; i < scrapes.size(); i++) {
            Scrape before = scrapes.get(i - 1);
            Scrape after = scrapes.get(i);
            double seconds = (after.epochMillis() - before.epochMillis()) / 1000.0;
            if (seconds <= 0) {
                continue;
            }
            Map<String, Double> increase = new TreeMap<>();
            Map<Map<String, String>, PrometheusText.Sample> previous = before.series(name);
            after.series(name).forEach((labels, sample) -> {
                PrometheusText.Sample old = previous.get(labels);
                String group = byLabel == null ? "" : String.valueOf(labels.get(byLabel));
                increase.merge(group, increase(old == null ? 0 : old.value(), sample.value()), Double::sum);
            });
            double at = (after.epochMillis() - originMillis) / 1000.0;
            increase.forEach((group, delta) -> groups.computeIfAbsent(group, g -> new ArrayList<>()).add(new Point(at, delta / seconds)));
        }
        return groups;
    }

    /** How much a counter grew from {@code before} to {@code after}; a counter that went down was reset to 0 in between. */
    public static double increase(double before, double after) {
        return after >= before ? after - before : after;
    }

    /**
     * Quantile {@code q} (0..1) of histogram {@code name} (its {@code name_bucket} series, summed
     * over every label but {@code le}) in each interval between scrapes; an interval in which
     * nothing was observed has no point.
     */
    public static List<Point> quantile(List<Scrape> scrapes, String name, double q, long originMillis) {
        List<Point> points = new ArrayList<>();
        for (int i = 1; i < scrapes.size(); i++) {
            TreeMap<Double, Double> buckets = bucketIncrease(scrapes.get(i - 1), scrapes.get(i), name, null)
                    .getOrDefault("", new TreeMap<>());
            double value = histogramQuantile(q, buckets);
            if (!Double.isNaN(value)) {
                points.add(new Point((scrapes.get(i).epochMillis() - originMillis) / 1000.0, value));
            }
        }
        return points;
    }

    /** Quantiles of a histogram over a whole window: how many observations, and the value at each quantile asked. */
    public record WindowQuantiles(double count, double[] values) {}

    /**
     * Quantiles {@code qs} (each 0..1) of histogram {@code name} over the whole span of
     * {@code scrapes}, from the increase of each bucket between the first scrape and the last,
     * summed over every label but {@code le} and {@code byLabel} and grouped by the latter. Groups
     * sorted by label value; one that observed nothing is left out; empty with fewer than 2 scrapes.
     */
    public static Map<String, WindowQuantiles> overWindow(List<Scrape> scrapes, String name, String byLabel, double... qs) {
        Map<String, WindowQuantiles> result = new TreeMap<>();
        if (scrapes.size() < 2) {
            return result;
        }
        bucketIncrease(scrapes.get(0), scrapes.get(scrapes.size() - 1), name, byLabel).forEach((group, buckets) -> {
            double count = buckets.isEmpty() || !buckets.lastKey().isInfinite() ? 0 : buckets.lastEntry().getValue();
            if (count > 0) {
                double[] values = new double[qs.length];
                for (int i = 0; i < qs.length; i++) {
                    values[i] = histogramQuantile(qs[i], buckets);
                }
                result.put(group, new WindowQuantiles(count, values));
            }
        });
        return result;
    }

    /**
     * How much each bucket of histogram {@code name} grew from {@code before} to {@code after}, as
     * cumulative counts by upper bound, summed over every label but {@code le} and {@code byLabel}
     * and grouped by the latter (null: one group, keyed "").
     */
    private static Map<String, TreeMap<Double, Double>> bucketIncrease(Scrape before, Scrape after, String name, String byLabel) {
        Map<Map<String, String>, PrometheusText.Sample> old = before.series(name + "_bucket");
        Map<String, TreeMap<Double, Double>> groups = new TreeMap<>();
        after.series(name + "_bucket").forEach((labels, sample) -> {
            PrometheusText.Sample was = old.get(labels);
            groups.computeIfAbsent(byLabel == null ? "" : String.valueOf(labels.get(byLabel)), g -> new TreeMap<>())
                    .merge(upperBound(labels.get("le")), increase(was == null ? 0 : was.value(), sample.value()), Double::sum);
        });
        return groups;
    }

    /**
     * Prometheus' {@code histogram_quantile}: {@code cumulative} maps each bucket's upper bound
     * ({@code le}, +Inf included) to the count of observations at or below it. The quantile is
     * interpolated linearly inside the bucket where its rank falls (the first bucket starts at 0);
     * a rank in the +Inf bucket gives the highest finite bound. NaN without observations or without
     * a +Inf bucket.
     */
    public static double histogramQuantile(double q, TreeMap<Double, Double> cumulative) {
        if (cumulative.isEmpty() || !cumulative.lastKey().isInfinite()) {
            return Double.NaN;
        }
        double total = cumulative.lastEntry().getValue();
        if (total <= 0) {
            return Double.NaN;
        }
        if (q < 0) {
            return Double.NEGATIVE_INFINITY;
        }
        if (q > 1) {
            return Double.POSITIVE_INFINITY;
        }
        double rank = q * total;
        double lowerBound = 0;
        double lowerCount = 0;
        for (Map.Entry<Double, Double> bucket : cumulative.entrySet()) {
            double upperBound = bucket.getKey();
            double count = bucket.getValue();
            if (count >= rank) {
                if (Double.isInfinite(upperBound)) {
                    return lowerBound; // Prometheus answers the highest finite bound
                }
                if (count == lowerCount) {
                    return upperBound;
                }
                return lowerBound + (upperBound - lowerBound) * (rank - lowerCount) / (count - lowerCount);
            }
            lowerBound = upperBound;
            lowerCount = count;
        }
        return lowerBound;
    }

    /**
     * Gauge {@code name} at each scrape, summed over its series and grouped by {@code byLabel}
     * (null: one group, keyed "").
     */
    public static Map<String, List<Point>> gauge(List<Scrape> scrapes, String name, String byLabel, long originMillis) {
        Map<String, List<Point>> groups = new TreeMap<>();
        for (Scrape scrape : scrapes) {
            Map<String, Double> sums = new TreeMap<>();
            scrape.series(name).forEach((labels, sample) ->
                    sums.merge(byLabel == null ? "" : String.valueOf(labels.get(byLabel)), sample.value(), Double::sum));
            double at = (scrape.epochMillis() - originMillis) / 1000.0;
            sums.forEach((group, value) -> groups.computeIfAbsent(group, g -> new ArrayList<>()).add(new Point(at, value)));
        }
        return groups;
    }

    private static double upperBound(String le) {
        if (le == null) {
            throw new IllegalArgumentException("a histogram bucket without an le label");
        }
        return le.equals("+Inf") || le.equals("Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
    }
}
