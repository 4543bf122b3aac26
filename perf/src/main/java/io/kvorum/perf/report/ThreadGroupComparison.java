package io.kvorum.perf.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The compare report's table of each server's thread groups side by side: their time on a core per
 * request answered, in every run ({@link ThreadWaits}, from result.json). It answers "which threads
 * did the extra CPU go to", which the servers' total cannot: a change that costs CPU on some thread
 * (a background task, the collector, the compiler) shows in that row only, while a row that moves in
 * every run alike is the machine.
 *
 * <p>Rows: per server, in the order the runs name them, each group that is among the
 * {@code rowsPerServer} busiest of some run, busiest first, with its figure in every run; then the
 * server's other groups together and its total. A group a run did not have (its threads never
 * started) shows as "–" and counts as zero in the change; a server a run did not have shows "–"
 * and has no change.
 */
public final class ThreadGroupComparison {

    private static final String OTHERS = "other groups";
    private static final String ALL = "all";

    private ThreadGroupComparison() {}

    /**
     * The section, heading included; a sentence instead of the table when a run has no thread
     * measurement (older results, a kernel without scheduler statistics).
     *
     * @param names   what each run is called, the first being the baseline
     * @param results the runs, in the same order
     * @param rowsPerServer how many of each run's busiest groups of a server have rows of their own
     */
    public static String markdown(List<String> names, List<RunResult> results, int rowsPerServer) {
        StringBuilder md = new StringBuilder("## Time on a core per request, by thread group (vs ")
                .append(names.get(0)).append(")\n\n");
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            RunResult r = results.get(i);
            if (r.cpu() == null || r.cpu().threadsByServer() == null || r.cpu().threadsByServer().isEmpty() || r.requests() <= 0) {
                missing.add(names.get(i));
            }
        }
        if (!missing.isEmpty()) {
            return md.append("No thread measurement for ").append(String.join(", ", missing))
                    .append(", so no thread comparison.\n\n").toString();
        }
        List<Map<String, Map<String, Double>>> perRun = new ArrayList<>();
        for (RunResult r : results) {
            perRun.add(microsPerRequest(r.cpu().threadsByServer(), r.requests()));
        }
        List<String> header = new ArrayList<>(List.of("server threads"));
        header.addAll(names);
        header.add("change");
        List<List<String>> rows = new ArrayList<>();
        for (String server : servers(perRun)) {
            List<Map<String, Double>> runs = new ArrayList<>();
            perRun.forEach(run -> runs.add(run.get(server)));
            List<String> shown = shown(runs, rowsPerServer);
            List<Map<String, Double>> tables = new ArrayList<>();
            runs.forEach(groups -> tables.add(groups == null ? null : table(groups, shown)));
            for (String group : rowsOf(shown, tables)) {
                rows.add(row(server, group, tables));
            }
        }
        md.append(Markdown.table(header, rows));
        md.append("\nEach group's time on a core during the measured run (the kernel's schedstat) divided by the "
                + "requests answered, in µs; change is the largest move from the baseline. A group that moves with "
                + "what the runs vary, round after round, is where a change costs; a server's every group moving "
                + "alike is the shared machine.\n\n");
        return md.toString();
    }

    /** One run's µs per request by server, then by group, busiest first. */
    static Map<String, Map<String, Double>> microsPerRequest(Map<String, List<ThreadGroupUse>> threadsByServer, long requests) {
        Map<String, Map<String, Double>> out = new LinkedHashMap<>();
        threadsByServer.forEach((server, groups) -> {
            List<ThreadGroupUse> busiest = new ArrayList<>(groups);
            busiest.sort(Comparator.comparingDouble(ThreadGroupUse::cpuSeconds).reversed());
            Map<String, Double> micros = new LinkedHashMap<>();
            busiest.forEach(g -> micros.merge(g.name(), g.cpuSeconds() * 1e6 / requests, Double::sum));
            out.put(server, micros);
        });
        return out;
    }

    private static Set<String> servers(List<Map<String, Map<String, Double>>> perRun) {
        Set<String> servers = new LinkedHashSet<>();
        perRun.forEach(run -> servers.addAll(run.keySet()));
        return servers;
    }

    /**
     * A server's groups to show: each among the {@code rowsPerServer} busiest of some run (null: a
     * run without the server), busiest at its most first.
     */
    private static List<String> shown(List<Map<String, Double>> runs, int rowsPerServer) {
        Map<String, Double> most = new LinkedHashMap<>();
        for (Map<String, Double> groups : runs) {
            if (groups != null) {
                groups.entrySet().stream().limit(rowsPerServer).forEach(e -> most.merge(e.getKey(), e.getValue(), Math::max));
            }
        }
        List<String> shown = new ArrayList<>(most.keySet());
        shown.sort(Comparator.comparingDouble((String g) -> most.get(g)).reversed());
        return shown;
    }

    /** One run's rows of a server: the shown groups it had, {@value #OTHERS} (the rest, if any) and {@value #ALL}. */
    private static Map<String, Double> table(Map<String, Double> groups, List<String> shown) {
        Map<String, Double> table = new LinkedHashMap<>();
        double all = 0;
        double others = 0;
        boolean anyOther = false;
        for (Map.Entry<String, Double> e : groups.entrySet()) {
            all += e.getValue();
            if (shown.contains(e.getKey())) {
                table.put(e.getKey(), e.getValue());
            } else {
                others += e.getValue();
                anyOther = true;
            }
        }
        if (anyOther) {
            table.put(OTHERS, others);
        }
        table.put(ALL, all);
        return table;
    }

    /** The rows of a server: its shown groups, then the others if a run had any, then the total. */
    private static List<String> rowsOf(List<String> shown, List<Map<String, Double>> tables) {
        List<String> rows = new ArrayList<>(shown);
        if (tables.stream().anyMatch(t -> t != null && t.containsKey(OTHERS))) {
            rows.add(OTHERS);
        }
        rows.add(ALL);
        return rows;
    }

    private static List<String> row(String server, String group, List<Map<String, Double>> tables) {
        List<String> row = new ArrayList<>();
        row.add(group.equals(ALL) ? "**" + server + " all**" : server + " " + group);
        Map<String, Double> baseline = tables.get(0);
        double change = 0;
        for (Map<String, Double> groups : tables) {
            Double us = groups == null ? null : groups.get(group);
            row.add(us == null ? "–" : String.format(Locale.ROOT, "%.2f", us));
            if (baseline != null && groups != null) {
                double move = valueOrZero(groups, group) - valueOrZero(baseline, group);
                if (Math.abs(move) > Math.abs(change)) {
                    change = move;
                }
            }
        }
        row.add(baseline == null ? "–" : String.format(Locale.ROOT, "%+.2f", change));
        return row;
    }

    private static double valueOrZero(Map<String, Double> groups, String group) {
        Double us = groups.get(group);
        return us == null ? 0 : us;
    }
}
