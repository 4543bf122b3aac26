package io.kvorum.perf.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the text wrk2 and Debian's wrk print with {@code --latency}, plus the {@code kvorum-status}
 * line of the perf/wrk scripts. Lines it does not know are skipped, so extra output is harmless;
 * a missing summary line is an error.
 */
public final class WrkOutputParser {

    private static final Pattern REQUESTS = Pattern.compile("^\\s*(\\d+) requests in ([\\d.]+\\w+),");
    private static final Pattern RATE = Pattern.compile("^Requests/sec:\\s+([\\d.]+)");
    private static final Pattern TRANSFER = Pattern.compile("^Transfer/sec:\\s+(\\S+)");
    private static final Pattern SOCKET_ERRORS =
            Pattern.compile("Socket errors: connect (\\d+), read (\\d+), write (\\d+), timeout (\\d+)");
    private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");
    /** "99.900%    2.88ms" (wrk2) and "99%  118.56ms" (wrk). */
    private static final Pattern PERCENTILE = Pattern.compile("^\\s*([\\d.]+)%\\s+([\\d.]+[a-z]+)\\s*$");
    private static final Pattern SPECTRUM = Pattern.compile("^\\s*([\\d.]+)\\s+([01]\\.\\d+)\\s+(\\d+)\\s+(?:[\\d.]+|inf)\\s*$");
    private static final Pattern MAX_HDR = Pattern.compile("^#\\[Max\\s*=\\s*([\\d.]+),");
    private static final Pattern THREAD_LATENCY = Pattern.compile("^\\s*Latency\\s+\\S+\\s+\\S+\\s+([\\d.]+[a-z]+)");
    private static final Pattern STATUS = Pattern.compile("(\\d{3})=(\\d+)");

    private WrkOutputParser() {}

    public static WrkOutput parse(String text) {
        long requests = -1;
        double duration = 0;
        double rate = -1;
        String transfer = "";
        WrkOutput.SocketErrors socketErrors = WrkOutput.SocketErrors.NONE;
        long non2xx = 0;
        Map<Integer, Long> statuses = new TreeMap<>();
        Map<Double, Double> percentiles = new TreeMap<>();
        List<WrkOutput.SpectrumPoint> spectrum = new ArrayList<>();
        double maxMs = Double.NaN;
        double threadMaxMs = Double.NaN;
        boolean inDistribution = false;
        for (String line : text.split("\\R")) {
            Matcher m;
            if (line.contains("Latency Distribution")) {
                inDistribution = true;
                continue;
            }
            if (inDistribution && (m = PERCENTILE.matcher(line)).matches()) {
                percentiles.put(Double.parseDouble(m.group(1)), toMillis(m.group(2)));
                continue;
            }
            inDistribution = false;
            if ((m = SPECTRUM.matcher(line)).matches()) {
                spectrum.add(new WrkOutput.SpectrumPoint(Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)),
                        Long.parseLong(m.group(3))));
            } else if ((m = REQUESTS.matcher(line)).find()) {
                requests = Long.parseLong(m.group(1));
                duration = toMillis(m.group(2)) / 1000;
            } else if ((m = RATE.matcher(line)).find()) {
                rate = Double.parseDouble(m.group(1));
            } else if ((m = TRANSFER.matcher(line)).find()) {
                transfer = m.group(1);
            } else if ((m = SOCKET_ERRORS.matcher(line)).find()) {
                socketErrors = new WrkOutput.SocketErrors(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
                        Long.parseLong(m.group(3)), Long.parseLong(m.group(4)));
            } else if ((m = NON_2XX.matcher(line)).find()) {
                non2xx = Long.parseLong(m.group(1));
            } else if ((m = MAX_HDR.matcher(line)).find()) {
                maxMs = Double.parseDouble(m.group(1));
            } else if ((m = THREAD_LATENCY.matcher(line)).find()) {
                threadMaxMs = toMillis(m.group(1));
            } else if (line.startsWith("kvorum-status")) {
                m = STATUS.matcher(line);
                while (m.find()) {
                    statuses.merge(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)), Long::sum);
                }
            }
        }
        if (requests < 0 || rate < 0) {
            throw new IllegalArgumentException("not a wrk/wrk2 summary (no 'N requests in' or 'Requests/sec' line):\n"
                    + text.substring(0, Math.min(text.length(), 2000)));
        }
        if (Double.isNaN(maxMs)) {
            maxMs = percentiles.containsKey(100.0) ? percentiles.get(100.0) : threadMaxMs;
        }
        return new WrkOutput(requests, duration, rate, transfer, socketErrors, non2xx, statuses, percentiles,
                List.copyOf(spectrum), maxMs);
    }

    /** "715.00us", "1.53ms", "1.40s", "2.00m", "1h" to milliseconds. */
    static double toMillis(String value) {
        Matcher m = Pattern.compile("([\\d.]+)([a-z]+)").matcher(value.toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("not a wrk duration: " + value);
        }
        double n = Double.parseDouble(m.group(1));
        return switch (m.group(2)) {
            case "us" -> n / 1000;
            case "ms" -> n;
            case "s" -> n * 1000;
            case "m" -> n * 60_000;
            case "h" -> n * 3_600_000;
            default -> throw new IllegalArgumentException("unknown unit in " + value);
        };
    }
}
