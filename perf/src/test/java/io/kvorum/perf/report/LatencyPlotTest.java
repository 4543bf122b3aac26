package io.kvorum.perf.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class LatencyPlotTest {

    private static final List<LatencyPlot.Point> FAST = List.of(new LatencyPlot.Point(0, 0.2), new LatencyPlot.Point(0.5, 1),
            new LatencyPlot.Point(0.99, 3), new LatencyPlot.Point(0.999, 8), new LatencyPlot.Point(1.0, 9));
    private static final List<LatencyPlot.Point> SLOW = List.of(new LatencyPlot.Point(0.5, 2), new LatencyPlot.Point(0.9, 20),
            new LatencyPlot.Point(0.9999, 240));

    private static Document parse(String svg) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<Element> runs(Document doc) {
        NodeList lines = doc.getElementsByTagName("polyline");
        List<Element> runs = new ArrayList<>();
        for (int i = 0; i < lines.getLength(); i++) {
            runs.add((Element) lines.item(i));
        }
        return runs;
    }

    @Test
    void wellFormedWithOneLinePerRunAndALegendEntryEach() throws Exception {
        String svg = LatencyPlot.svg("a & b <compared>", List.of(new LatencyPlot.Series("before <1>", FAST),
                new LatencyPlot.Series("after", SLOW)));

        Document doc = parse(svg);

        assertThat(doc.getDocumentElement().getTagName()).isEqualTo("svg");
        assertThat(runs(doc)).hasSize(2);
        assertThat(runs(doc).get(0).getAttribute("points").split(" ")).as("the p=1 point is left out").hasSize(4);
        assertThat(svg).contains(">before &lt;1&gt;</text>", ">after</text>", ">99.9%</text>", ">99.99%</text>", ">1 ms</text>");
    }

    @Test
    void higherPercentilesAreFurtherRightAndHigherLatenciesHigherUp() throws Exception {
        Element slow = runs(parse(LatencyPlot.svg("t", List.of(new LatencyPlot.Series("slow", SLOW))))).get(0);
        String[] points = slow.getAttribute("points").split(" ");
        double[] xs = new double[points.length];
        double[] ys = new double[points.length];
        for (int i = 0; i < points.length; i++) {
            xs[i] = Double.parseDouble(points[i].split(",")[0]);
            ys[i] = Double.parseDouble(points[i].split(",")[1]);
        }
        assertThat(xs).isSorted();
        assertThat(ys[0]).isGreaterThan(ys[1]).as("SVG y grows downwards");
        assertThat(ys[1]).isGreaterThan(ys[2]);
    }

    @Test
    void percentilesSitOnALogScaleOfOneOverOneMinusP() {
        assertThat(LatencyPlot.x(0.9)).isCloseTo(1, within(1e-9));
        assertThat(LatencyPlot.x(0.999)).isCloseTo(3, within(1e-9));
    }
}
