package io.kvorum.perf.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class YcsbPhaseTest {

    @Test
    void loadCommandRunsYcsbsClientWithTheBindingAndHdrPercentiles() {
        YcsbPhase load = new YcsbPhase("load", Path.of("w/workloada"), true, 8, 0,
                Map.of(KvorumDB.URLS, "http://127.0.0.1:1"));

        List<String> command = load.command("java", "perf.jar");

        assertThat(command).startsWith("java", "-Xmx1g", "-cp", "perf.jar", "site.ycsb.Client", "-load",
                "-db", KvorumDB.class.getName(), "-P", "w/workloada");
        assertThat(String.join(" ", command)).contains("-p kvorum.urls=http://127.0.0.1:1",
                "-p measurementtype=hdrhistogram", "-p hdrhistogram.percentiles=50,95,99,99.9", "-threads 8");
        assertThat(command).doesNotContain("-target", "-t");
    }

    @Test
    void throttledRunPassesItsTarget() {
        YcsbPhase run = new YcsbPhase("workloadc", Path.of("workloadc"), false, 4, 500, Map.of());

        assertThat(String.join(" ", run.command("java", "cp"))).contains(" -t ", "-target 500");
    }
}
