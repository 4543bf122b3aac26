package io.kvorum.perf.driver;

import io.kvorum.perf.load.WrkOutput;
import io.kvorum.perf.report.RunResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * A {@link DriverLoad.Result} in the shape of a wrk run's output, so that the driver's run has the
 * same result.json, plot and compare report as wrk's. Failures count as non-2xx answers.
 */
public final class DriverOutput {

    private static final double NS_PER_MS = 1e6;

    private DriverOutput() {}

    public static WrkOutput of(DriverLoad.Result result) {
        Histogram h = result.latencyNs();
        Map<Double, Double> percentiles = new LinkedHashMap<>();
        for (double p : RunResult.PERCENTILES) {
            percentiles.put(p, h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(p) / NS_PER_MS);
        }
        List<WrkOutput.SpectrumPoint> spectrum = new ArrayList<>();
        if (h.getTotalCount() > 0) {
            for (HistogramIterationValue v : h.percentiles(5)) {
                spectrum.add(new WrkOutput.SpectrumPoint(v.getValueIteratedTo() / NS_PER_MS,
                        v.getPercentileLevelIteratedTo() / 100, v.getTotalCountToThisValue()));
            }
        }
        return new WrkOutput(result.requests(), result.seconds(), result.requestsPerSec(), "n/a",
                WrkOutput.SocketErrors.NONE, result.failureCount(), Map.of(), percentiles, spectrum,
                h.getTotalCount() == 0 ? 0 : h.getMaxValue() / NS_PER_MS);
    }
}
