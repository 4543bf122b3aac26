package io.kvorum.perf.ycsb;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The six YCSB core workloads, declared in the order YCSB's documentation runs them after one
 * load: A, B, C, F, D, E. The read and update workloads come first because they leave the record
 * count alone; D and E insert new records, and E (scans) runs last over everything inserted before.
 */
public enum Workload {
    A("update heavy: 50% read, 50% update, zipfian"),
    B("read mostly: 95% read, 5% update, zipfian"),
    C("read only: 100% read, zipfian"),
    F("read-modify-write: 50% read, 50% read-modify-write, zipfian"),
    D("read latest: 95% read, 5% insert, latest"),
    E("short ranges: 95% scan (1-100, uniform), 5% insert, zipfian");

    private final String description;

    Workload(String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }

    /** The name of its parameter file: {@code workloada} ... */
    public String fileName() {
        return "workload" + name().toLowerCase(Locale.ROOT);
    }

    /** Whether its operations add records (D and E). */
    public boolean inserts() {
        return this == D || this == E;
    }

    /**
     * The workloads named in a comma-separated list of letters ({@code "a,c,e"}, any case),
     * in canonical order whatever the order given, each once.
     *
     * @throws IllegalArgumentException naming the first letter that is not a workload
     */
    public static List<Workload> parseList(String letters) {
        Set<Workload> chosen = EnumSet.noneOf(Workload.class);
        for (String letter : letters.split(",")) {
            String l = letter.trim().toUpperCase(Locale.ROOT);
            if (l.isEmpty()) {
                continue;
            }
            try {
                chosen.add(valueOf(l));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown workload '" + letter.trim() + "': choose from a,b,c,d,e,f");
            }
        }
        if (chosen.isEmpty()) {
            throw new IllegalArgumentException("no workload given: choose from a,b,c,d,e,f");
        }
        return List.copyOf(chosen); // an EnumSet iterates in declaration order

    }

    static List<Workload> all() {
        return Arrays.asList(values());
    }
}
