package io.kvorum.perf.report;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * "Top frames that changed" between runs: each run's self-time share per frame (the leaf of each
 * collapsed stack, weighted by its samples, over all samples), and the frames whose share moved the
 * most from the first run (the baseline) to any other.
 */
public final class FrameDiff {

    /** A frame's share (0..1) in each run, and its largest change from the baseline (signed). */
    public record Change(String frame, List<Double> shares, double change) {}

    private FrameDiff() {}

    /** Self-time share per leaf frame from collapsed stacks ("a;b;leaf 12" per line). */
    public static Map<String, Double> selfShares(Stream<String> collapsedLines) {
        Map<String, Long> samples = new HashMap<>();
        long[] total = {0};
        collapsedLines.forEach(line -> {
            int space = line.lastIndexOf(' ');
            if (space <= 0) {
                return;
            }
            long count;
            try {
                count = Long.parseLong(line.substring(space + 1).trim());
            } catch (NumberFormatException e) {
                return;
            }
            String stack = line.substring(0, space);
            String leaf = stack.substring(stack.lastIndexOf(';') + 1);
            samples.merge(leaf, count, Long::sum);
            total[0] += count;
        });
        Map<String, Double> shares = new HashMap<>();
        samples.forEach((frame, n) -> shares.put(frame, (double) n / total[0]));
        return shares;
    }

    /** Self-time share per leaf frame of a collapsed stacks file, gzipped ({@code .gz}) or plain. */
    public static Map<String, Double> selfShares(Path collapsed) {
        try (Stream<String> lines = lines(collapsed)) {
            return selfShares(lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The lines of a collapsed stacks file, gunzipped when its name ends in {@code .gz}; close the stream. */
    public static Stream<String> lines(Path collapsed) throws IOException {
        if (!collapsed.getFileName().toString().endsWith(".gz")) {
            return Files.lines(collapsed, StandardCharsets.UTF_8);
        }
        BufferedReader reader = new BufferedReader(new InputStreamReader(
                new GZIPInputStream(Files.newInputStream(collapsed)), StandardCharsets.UTF_8));
        return reader.lines().onClose(() -> {
            try {
                reader.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /**
     * The collapsed stacks file of a run folder: {@code name} as result.json gives it, else the other
     * form of it (a plain {@code cpu.collapsed} gzipped later, or the reverse); null when neither exists.
     */
    public static Path find(Path runDir, String name) {
        if (name == null) {
            return null;
        }
        Path file = runDir.resolve(name);
        Path other = runDir.resolve(name.endsWith(".gz") ? name.substring(0, name.length() - 3) : name + ".gz");
        return Files.isRegularFile(file) ? file : Files.isRegularFile(other) ? other : null;
    }

    /** The {@code n} frames with the largest absolute change of share from runs[0] to any other run. */
    public static List<Change> topChanges(List<Map<String, Double>> runs, int n) {
        if (runs.size() < 2) {
            return List.of();
        }
        Set<String> frames = new LinkedHashSet<>();
        runs.forEach(r -> frames.addAll(r.keySet()));
        List<Change> changes = new ArrayList<>();
        for (String frame : frames) {
            List<Double> shares = runs.stream().map(r -> r.getOrDefault(frame, 0.0)).toList();
            double change = 0;
            for (int i = 1; i < shares.size(); i++) {
                double d = shares.get(i) - shares.get(0);
                if (Math.abs(d) > Math.abs(change)) {
                    change = d;
                }
            }
            changes.add(new Change(frame, shares, change));
        }
        changes.sort(Comparator.comparingDouble((Change c) -> -Math.abs(c.change())).thenComparing(Change::frame));
        return List.copyOf(changes.subList(0, Math.min(n, changes.size())));
    }
}
