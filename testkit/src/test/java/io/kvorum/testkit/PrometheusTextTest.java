package io.kvorum.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

    /** As Micrometer's Prometheus registry writes it: HELP and TYPE lines, labels, histogram buckets. */
    static final String MICROMETER_STYLE = """
            # HELP kvorum_requests_total Client requests answered by this node as coordinator
            # TYPE kvorum_requests_total counter
            kvorum_requests_total{code="200",op="get",} 1234.0
            kvorum_requests_total{code="503",op="put",} 2.0
            # HELP kvorum_request_duration_seconds Latency
            # TYPE kvorum_request_duration_seconds histogram
            kvorum_request_duration_seconds_bucket{op="get",le="1.0E-4",} 3.0
            kvorum_request_duration_seconds_bucket{op="get",le="+Inf",} 1236.0
            kvorum_request_duration_seconds_count{op="get",} 1236.0
            kvorum_request_duration_seconds_sum{op="get",} 1.5
            # TYPE kvorum_read_repairs_total counter
            kvorum_read_repairs_total 0.0
            # TYPE process_cpu_usage gauge
            process_cpu_usage NaN
            """;

    @Test
    void readsNamesLabelsAndValuesAndSkipsComments() {
        List<PrometheusText.Sample> samples = PrometheusText.parse(MICROMETER_STYLE).samples();

        assertThat(samples).hasSize(8);
        assertThat(samples.get(0)).isEqualTo(new PrometheusText.Sample("kvorum_requests_total", Map.of("code", "200", "op", "get"), 1234));
        assertThat(samples.get(3).labels()).containsEntry("le", "+Inf");
        assertThat(samples.get(2).label("le")).isEqualTo("1.0E-4");
        assertThat(samples.get(6)).isEqualTo(new PrometheusText.Sample("kvorum_read_repairs_total", Map.of(), 0));
        assertThat(samples.get(7).value()).isNaN();
    }

    @Test
    void readsEscapesInfinitiesTimestampsAndSpacedLabels() {
        List<PrometheusText.Sample> samples = PrometheusText.parse("""
                m{path="C:\\\\dir",msg="say \\"hi\\"\\n"} +Inf 1700000000000
                m{a="x", b="y",} -Inf
                m_with_exponent 1.5e3
                """).samples();

        assertThat(samples.get(0).labels()).containsEntry("path", "C:\\dir").containsEntry("msg", "say \"hi\"\n");
        assertThat(samples.get(0).value()).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(samples.get(1).labels()).containsEntry("a", "x").containsEntry("b", "y");
        assertThat(samples.get(1).value()).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(samples.get(2).value()).isEqualTo(1500);
    }

    @Test
    void aLineThatIsNotASampleIsNamedByItsNumber() {
        assertThatThrownBy(() -> PrometheusText.parse("# ok\nm 1\nm{a=\"x\" 2\n"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("line 3 is not a Prometheus sample");
        assertThatThrownBy(() -> PrometheusText.parse("m not-a-number"))
                .hasMessageStartingWith("line 1 is not a Prometheus sample");
        assertThatThrownBy(() -> PrometheusText.parse("<html>oops</html>"))
                .hasMessageStartingWith("line 1 is not a Prometheus sample");
    }

    @Test
    void readsTheDeclaredFamiliesAndSumsSeriesByLabels() {
        PrometheusText text = PrometheusText.parse(MICROMETER_STYLE);

        assertThat(text.types()).containsEntry("kvorum_requests_total", "counter")
                .containsEntry("kvorum_request_duration_seconds", "histogram");
        assertThat(text.families()).containsExactly("kvorum_read_repairs_total", "kvorum_request_duration_seconds",
                "kvorum_requests_total", "process_cpu_usage");
        assertThat(text.sum("kvorum_requests_total", Map.of())).isEqualTo(1236);
        assertThat(text.sum("kvorum_requests_total", Map.of("op", "put"))).isEqualTo(2);
        assertThat(text.sum("no_such_family", Map.of())).isZero();
        assertThat(text.labelValues()).contains("get", "put", "+Inf", "1.0E-4");
    }
}
