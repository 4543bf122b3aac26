package io.kvorum.perf.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

class WorkloadTest {

    /** The workload files, relative to the module (surefire's working directory). */
    static final Path WORKLOADS = Path.of("ycsb", "workloads");

    @Test
    void listRunsInYcsbsOrderWhateverTheOrderGiven() {
        assertThat(Workload.parseList("e, D,a,f,c,b,a")).containsExactly(
                Workload.A, Workload.B, Workload.C, Workload.F, Workload.D, Workload.E);
        assertThat(Workload.parseList("c")).containsExactly(Workload.C);
    }

    @Test
    void unknownLetterIsRejectedByName() {
        assertThatThrownBy(() -> Workload.parseList("a,g")).hasMessageContaining("'g'");
        assertThatThrownBy(() -> Workload.parseList(" , ")).hasMessageContaining("no workload");
    }

    @Test
    void filesCarryYcsbsStandardMixes() throws IOException {
        // Proportions of read, update, scan, insert, read-modify-write, and the request distribution.
        Map<Workload, String> standard = Map.of(
                Workload.A, "0.5 0.5 0 0 0 zipfian",
                Workload.B, "0.95 0.05 0 0 0 zipfian",
                Workload.C, "1 0 0 0 0 zipfian",
                Workload.D, "0.95 0 0 0.05 0 latest",
                Workload.E, "0 0 0.95 0.05 0 zipfian",
                Workload.F, "0.5 0 0 0 0.5 zipfian");
        for (Workload w : Workload.values()) {
            Properties p = load(w);
            String mix = String.join(" ", p.getProperty("readproportion"), p.getProperty("updateproportion"),
                    p.getProperty("scanproportion"), p.getProperty("insertproportion"),
                    p.getProperty("readmodifywriteproportion", "0"), p.getProperty("requestdistribution"));
            assertThat(mix).as(w.fileName()).isEqualTo(standard.get(w));
            assertThat(p.getProperty("workload")).isEqualTo(CoreWorkload.class.getName());
        }
        Properties e = load(Workload.E);
        assertThat(e.getProperty("maxscanlength")).isEqualTo("100");
        assertThat(e.getProperty("scanlengthdistribution")).isEqualTo("uniform");
    }

    @Test
    void ycsbAcceptsEveryFile() throws Exception {
        Measurements.setProperties(new Properties()); // CoreWorkload's constructor needs YCSB's global measurements
        for (Workload w : Workload.values()) {
            CoreWorkload workload = new CoreWorkload();
            workload.init(load(w));
        }
    }

    private static Properties load(Workload w) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(WORKLOADS.resolve(w.fileName()))) {
            p.load(r);
        }
        return p;
    }
}
