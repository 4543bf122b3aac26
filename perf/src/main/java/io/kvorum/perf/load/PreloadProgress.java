package io.kvorum.perf.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What perf/wrk/preload.lua says about its threads, line by line on the tool's stdout:
 * {@code kvorum-preload <thread> <share> <written> <running|done> [<status>=<count> ...]}, every
 * 1000 answers per thread and once when the thread has an answer for each of its keys. Keeps each
 * thread's latest report; the preload is complete when every thread reported done.
 *
 * <p>Not thread-safe: one reader feeds it.
 */
public final class PreloadProgress {

    /** One progress line: thread {@code thread} wrote {@code written} of its {@code share} keys so far. */
    public record Report(int thread, long share, long written, boolean done, SortedMap<Integer, Long> failed) {
        public Report {
            failed = Collections.unmodifiableSortedMap(new TreeMap<>(failed));
        }

        /** Keys answered so far, with any status. */
        public long answered() {
            return written + failed.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    private static final Pattern LINE = Pattern.compile("kvorum-preload (\\d+) (\\d+) (\\d+) (running|done)((?: \\d{3}=\\d+)*)\\s*");
    private static final Pattern FAILED = Pattern.compile(" (\\d{3})=(\\d+)");

    private final long keys;
    private final Report[] latest;

    /** @param threads the tool's -t (thread ids 0..threads-1); @param keys KEYS, shared by the threads */
    public PreloadProgress(int threads, long keys) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, not " + threads);
        }
        this.keys = keys;
        this.latest = new Report[threads];
    }

    /** The report in {@code line}, or empty for any other line (wrk's own output, errors). */
    public static Optional<Report> parse(String line) {
        Matcher m = LINE.matcher(line);
        if (!m.matches()) {
            return Optional.empty();
        }
        SortedMap<Integer, Long> failed = new TreeMap<>();
        Matcher f = FAILED.matcher(m.group(5));
        while (f.find()) {
            failed.merge(Integer.parseInt(f.group(1)), Long.parseLong(f.group(2)), Long::sum);
        }
        return Optional.of(new Report(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                m.group(4).equals("done"), failed));
    }

    /**
     * Takes a thread's report, replacing its previous one.
     *
     * @throws IllegalArgumentException for a thread id outside 0..threads-1 (the tool ran with other -t)
     */
    public void accept(Report report) {
        if (report.thread() < 0 || report.thread() >= latest.length) {
            throw new IllegalArgumentException("preload.lua reported thread " + report.thread() + " but the tool runs "
                    + latest.length + " thread(s)");
        }
        latest[report.thread()] = report;
    }

    /**
     * Reads {@code in} line by line, taking every report, until every thread reported done (returns
     * true at once, without reading further: the tool keeps running for its -d and prints nothing
     * more) or the stream ends first (false). Other lines go to {@code otherLines}, done lines too.
     *
     * @param afterReport called after each report was taken, e.g. to redraw a progress bar
     */
    public boolean follow(BufferedReader in, Consumer<String> otherLines, Runnable afterReport) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            Optional<Report> report = parse(line);
            if (report.isEmpty()) {
                otherLines.accept(line);
                continue;
            }
            if (report.get().done()) {
                otherLines.accept(line);
            }
            accept(report.get());
            afterReport.run();
            if (allDone()) {
                return true;
            }
        }
        return false;
    }

    public boolean allDone() {
        for (Report r : latest) {
            if (r == null || !r.done()) {
                return false;
            }
        }
        return true;
    }

    public int threadsNotDone() {
        int n = 0;
        for (Report r : latest) {
            if (r == null || !r.done()) {
                n++;
            }
        }
        return n;
    }

    public long keys() {
        return keys;
    }

    public long answered() {
        long n = 0;
        for (Report r : latest) {
            n += r == null ? 0 : r.answered();
        }
        return n;
    }

    public long written() {
        long n = 0;
        for (Report r : latest) {
            n += r == null ? 0 : r.written();
        }
        return n;
    }

    /** The threads' shares summed, once every thread reported: KEYS when the step matched -t. */
    public long shares() {
        long n = 0;
        for (Report r : latest) {
            n += r == null ? 0 : r.share();
        }
        return n;
    }

    /** Non-2xx answers by status over all threads. */
    public SortedMap<Integer, Long> failed() {
        SortedMap<Integer, Long> all = new TreeMap<>();
        for (Report r : latest) {
            if (r != null) {
                r.failed().forEach((status, n) -> all.merge(status, n, Long::sum));
            }
        }
        return all;
    }

    /** "503: 12, 500: 1", or "" when every answer was 2xx. */
    public String failedText() {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<Integer, Long> e : failed().entrySet()) {
            text.append(text.length() == 0 ? "" : ", ").append(e.getKey()).append(": ").append(String.format(Locale.ROOT, "%,d", e.getValue()));
        }
        return text.toString();
    }

    /** The progress bar: "preload  45.0%  90,000/200,000 keys  25,000 keys/s  ETA 4 s". */
    public String bar(double elapsedSeconds) {
        long done = answered();
        double perSecond = done / Math.max(1e-3, elapsedSeconds);
        long eta = perSecond > 0 ? Math.round((keys - done) / perSecond) : -1;
        return String.format(Locale.ROOT, "preload %5.1f%%  %,d/%,d keys  %,.0f keys/s  ETA %s",
                100.0 * done / Math.max(1, keys), done, keys, perSecond, eta < 0 ? "?" : eta + " s");
    }
}
