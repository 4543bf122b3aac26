package io.kvorum.perf.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvorum.testkit.PrometheusText;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class MetricSeriesTest {

    private static final long T0 = 1_800_000_000_000L;

    @Test
    void histogramQuantileInterpolatesInsideTheBucketOfTheRank() {
        // 100 observations: 10 up to 1 ms, 50 in (1, 10] ms, 30 in (10, 100] ms, 10 above 100 ms.
        TreeMap<Double, Double> cumulative = buckets(10, 60, 90, 100);

        // p50: rank 50, in (0.001, 0.01] holding ranks 10..60: 0.001 + 0.009 * (50 - 10) / 50 = 0.0082
        assertThat(MetricSeries.histogramQuantile(0.5, cumulative)).isCloseTo(0.0082, within(1e-12));
        // p85: rank 85, in (0.01, 0.1] holding 60..90: 0.01 + 0.09 * 25 / 30 = 0.085
        assertThat(MetricSeries.histogramQuantile(0.85, cumulative)).isCloseTo(0.085, within(1e-12));
        // p5: rank 5 in the first bucket, which starts at 0: 0.001 * 5 / 10
        assertThat(MetricSeries.histogramQuantile(0.05, cumulative)).isCloseTo(0.0005, within(1e-12));
        // p99: rank 99 in +Inf: the highest finite bound, as Prometheus answers
        assertThat(MetricSeries.histogramQuantile(0.99, cumulative)).isEqualTo(0.1);
        assertThat(MetricSeries.histogramQuantile(0.99, buckets(0, 0, 0, 0))).isNaN();
        assertThat(MetricSeries.histogramQuantile(0.99, new TreeMap<>(Map.of(0.1, 5.0)))).as("no +Inf bucket").isNaN();
    }

    @Test
    void quantileOverTimeUsesTheIncreaseOfEachBucketInTheIntervalSummedOverOps() {
        // Before the interval: 1000 fast gets already counted, which must not weigh on the interval.
        Scrape before = scrape(T0, histogram("get", 1000, 1000, 1000, 1000) + histogram("put", 0, 0, 0, 0));
        // In the interval: gets 10 / 60 / 90 / 100 cumulative, puts nothing, so p85 is 0.085 as above.
        Scrape after = scrape(T0 + 1000, histogram("get", 1010, 1060, 1090, 1100) + histogram("put", 0, 0, 0, 0));
        // Then a put-only interval of 4 observations, all in (0.01, 0.1]: p50 = 0.01 + 0.09 * 2 / 4.
        Scrape later = scrape(T0 + 2000, histogram("get", 1010, 1060, 1090, 1100) + histogram("put", 0, 0, 4, 4));
        // Then nothing at all: no point.
        Scrape idle = scrape(T0 + 3000, histogram("get", 1010, 1060, 1090, 1100) + histogram("put", 0, 0, 4, 4));

        List<MetricSeries.Point> p85 = MetricSeries.quantile(List.of(before, after, later, idle), "d", 0.85, T0);
        List<MetricSeries.Point> p50 = MetricSeries.quantile(List.of(before, after, later, idle), "d", 0.5, T0);

        assertThat(p85).hasSize(2);
        assertThat(p85.get(0).seconds()).isEqualTo(1.0);
        assertThat(p85.get(0).value()).isCloseTo(0.085, within(1e-12));
        assertThat(p50.get(1).seconds()).isEqualTo(2.0);
        assertThat(p50.get(1).value()).isCloseTo(0.055, within(1e-12));
    }

    @Test
    void quantilesOverTheWindowUseTheIncreaseFromTheFirstScrapeToTheLastByOp() {
        Scrape first = scrape(T0, histogram("get", 1000, 1000, 1000, 1000) + histogram("put", 7, 7, 7, 7));
        Scrape middle = scrape(T0 + 1000, histogram("get", 1005, 1030, 1045, 1050) + histogram("put", 7, 7, 7, 7));
        // Over the window: gets 10 / 60 / 90 / 100 cumulative, puts nothing (left out).
        Scrape last = scrape(T0 + 2000, histogram("get", 1010, 1060, 1090, 1100) + histogram("put", 7, 7, 7, 7));

        Map<String, MetricSeries.WindowQuantiles> byOp = MetricSeries.overWindow(List.of(first, middle, last), "d", "op", 0.5, 0.85, 0.95);

        assertThat(byOp).containsOnlyKeys("get");
        assertThat(byOp.get("get").count()).isEqualTo(100);
        assertThat(byOp.get("get").values()[0]).isCloseTo(0.001 + 0.009 * 40 / 50, within(1e-12));
        assertThat(byOp.get("get").values()[1]).isCloseTo(0.085, within(1e-12));
        assertThat(byOp.get("get").values()[2]).isCloseTo(0.1, within(1e-12)); // in +Inf: the highest finite bound
        assertThat(MetricSeries.overWindow(List.of(last), "d", "op", 0.5)).isEmpty();
    }

    @Test
    void aCounterThatWentDownWasResetAndCountsFromZero() {
        assertThat(MetricSeries.increase(100, 150)).isEqualTo(50);
        assertThat(MetricSeries.increase(150, 20)).as("restart between the scrapes").isEqualTo(20);

        List<Scrape> scrapes = List.of(scrape(T0, "c{op=\"get\"} 100\n"), scrape(T0 + 1000, "c{op=\"get\"} 150\n"),
                scrape(T0 + 2000, "c{op=\"get\"} 20\n"), scrape(T0 + 4000, "c{op=\"get\"} 50\n"));

        List<MetricSeries.Point> rate = MetricSeries.rate(scrapes, "c", "op", T0).get("get");

        assertThat(rate).containsExactly(new MetricSeries.Point(1, 50), new MetricSeries.Point(2, 20), new MetricSeries.Point(4, 15));
    }

    @Test
    void rateSumsTheSeriesOfAGroupAndCountsANewSeriesFromZero() {
        Scrape before = scrape(T0, "c{op=\"get\",code=\"200\"} 10\nc{op=\"put\",code=\"201\"} 5\n");
        Scrape after = scrape(T0 + 2000, "c{op=\"get\",code=\"200\"} 30\nc{op=\"get\",code=\"503\"} 4\nc{op=\"put\",code=\"201\"} 5\n");

        Map<String, List<MetricSeries.Point>> byOp = MetricSeries.rate(List.of(before, after), "c", "op", T0);
        Map<String, List<MetricSeries.Point>> all = MetricSeries.rate(List.of(before, after), "c", null, T0);

        assertThat(byOp.get("get")).containsExactly(new MetricSeries.Point(2, 12)); // (20 + 4) / 2 s
        assertThat(byOp.get("put")).containsExactly(new MetricSeries.Point(2, 0));
        assertThat(all.get("")).containsExactly(new MetricSeries.Point(2, 12));
    }

    @Test
    void gaugesAreReadAsTheyAreByGroup() {
        List<Scrape> scrapes = List.of(scrape(T0 + 500, "q{queue=\"write\"} 3\nq{queue=\"read\"} 0\n"),
                scrape(T0 + 1500, "q{queue=\"write\"} 7\nq{queue=\"read\"} 1\n"));

        Map<String, List<MetricSeries.Point>> depth = MetricSeries.gauge(scrapes, "q", "queue", T0);

        assertThat(depth.get("write")).containsExactly(new MetricSeries.Point(0.5, 3), new MetricSeries.Point(1.5, 7));
        assertThat(depth.get("read")).containsExactly(new MetricSeries.Point(0.5, 0), new MetricSeries.Point(1.5, 1));
    }

    private static TreeMap<Double, Double> buckets(double le1ms, double le10ms, double le100ms, double inf) {
        return new TreeMap<>(Map.of(0.001, le1ms, 0.01, le10ms, 0.1, le100ms, Double.POSITIVE_INFINITY, inf));
    }

    static String histogram(String op, long le1ms, long le10ms, long le100ms, long inf) {
        return "d_bucket{op=\"" + op + "\",le=\"0.001\"} " + le1ms + "\n"
                + "d_bucket{op=\"" + op + "\",le=\"0.01\"} " + le10ms + "\n"
                + "d_bucket{op=\"" + op + "\",le=\"0.1\"} " + le100ms + "\n"
                + "d_bucket{op=\"" + op + "\",le=\"+Inf\"} " + inf + "\n"
                + "d_count{op=\"" + op + "\"} " + inf + "\n";
    }

    static Scrape scrape(long at, String text) {
        return new Scrape(at, PrometheusText.parse(text).samples());
    }
}
