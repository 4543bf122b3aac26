package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.config.NodeOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Walks the {@link NodeOption} table (Ratis {@code TestConfUtils}): the names derived from it, the
 * picocli model built from it, and the published reference page {@code docs/configuration.md}.
 * Lives beside {@link Main} because the picocli model is package-private there.
 */
class NodeOptionTest {

    @Test
    void everyOptionHasAWellFormedNameFlagAndVariable() {
        for (NodeOption o : NodeOption.values()) {
            assertThat(o.optionName()).as("name of %s", o).matches("[a-z][a-z0-9]*(-[a-z0-9]+)*");
            // Derived independently of NodeOption's own code: from the constant's name.
            assertThat(o.optionName()).isEqualTo(o.name().toLowerCase(Locale.ROOT).replace('_', '-'));
            assertThat(o.flag()).isEqualTo("--" + o.optionName());
            assertThat(o.envVar()).isEqualTo("KVORUM_" + o.name());
            assertThat(o.envVar()).matches("KVORUM_[A-Z0-9]+(_[A-Z0-9]+)*");
        }
    }

    @Test
    void namesAreUnique() {
        List<NodeOption> all = List.of(NodeOption.values());
        assertThat(all.stream().map(NodeOption::flag).distinct()).hasSameSizeAs(all);
        assertThat(all.stream().map(NodeOption::envVar).distinct()).hasSameSizeAs(all);
    }

    @Test
    void everyOptionIsDocumented() {
        for (NodeOption o : NodeOption.values()) {
            assertThat(o.doc()).as("doc of %s", o).isNotBlank().endsWith(".").doesNotContain("\n").doesNotContain("|");
            if (o.defaultValue() == null) {
                assertThat(o.doc()).as("a derived default is explained: %s", o).contains("Default: ");
            }
        }
    }

    @Test
    void switchesHaveABooleanDefaultAndValuedOptionsALabel() {
        for (NodeOption o : NodeOption.values()) {
            if (o.isSwitch()) {
                assertThat(o.valueLabel()).isNull();
                assertThat(o.defaultValue()).as("default of %s", o).isIn("true", "false");
            } else {
                assertThat(o.valueLabel()).as("label of %s", o).isNotBlank().doesNotContain(" ");
            }
        }
        assertThat(NodeOption.FSYNC.isSwitch()).isTrue();
    }

    @Test
    void theCommandLineHasExactlyTheseOptions() {
        CommandSpec spec = Main.commandSpec();
        Map<String, OptionSpec> byName = new HashMap<>();
        List<String> standard = new ArrayList<>();
        for (OptionSpec option : spec.options()) {
            if (option.usageHelp() || option.versionHelp()) {
                standard.addAll(Arrays.asList(option.names()));
                continue;
            }
            assertThat(option.names()).as("one name per option, no short aliases").hasSize(1);
            assertThat(byName.put(option.longestName(), option)).isNull();
        }
        assertThat(standard).contains("--help", "--version");
        assertThat(byName.keySet()).containsExactlyInAnyOrderElementsOf(flags());

        for (NodeOption o : NodeOption.values()) {
            OptionSpec option = byName.get(o.flag());
            String description = String.join(" ", option.description());
            assertThat(description).contains(o.doc()).contains(o.envVar());
            if (o.defaultValue() != null) {
                assertThat(description).contains("Default: " + o.defaultValue());
            }
            assertThat(option.defaultValue()).as("defaults live in NodeConfig, not picocli").isNull();
            if (o.isSwitch()) {
                assertThat(option.arity().min()).isZero();
                assertThat(option.arity().max()).isEqualTo(1);
            } else {
                assertThat(option.arity().min()).isEqualTo(1);
                assertThat(option.arity().max()).isEqualTo(1);
                assertThat(option.paramLabel()).isEqualTo(o.valueLabel());
            }
        }
    }

    @Test
    void theConfigurationPageListsEveryOption() throws IOException {
        Path page = repositoryRoot().resolve("docs/configuration.md");
        String text = Files.readString(page, StandardCharsets.UTF_8);
        assertThat(text).contains("NodeOption");

        Map<String, List<String>> rows = optionRows(text);
        assertThat(rows.keySet()).as("the options of %s", page).containsExactlyInAnyOrderElementsOf(flags());

        for (NodeOption o : NodeOption.values()) {
            List<String> row = rows.get(o.flag());
            String optionCell = row.get(0);
            assertThat(optionCell).as("option cell of %s", o)
                    .isEqualTo(o.isSwitch() ? "`" + o.flag() + "`" : "`" + o.flag() + " " + o.valueLabel() + "`");
            assertThat(row.get(1)).as("env var of %s", o).isEqualTo("`" + o.envVar() + "`");
            assertThat(row.get(2)).as("default of %s", o)
                    .isEqualTo(o.defaultValue() != null ? "`" + o.defaultValue() + "`" : "*(derived)*");
            assertThat(unescapeHtml(row.get(3))).as("meaning of %s", o).isEqualTo(o.doc());
        }
    }

    private static List<String> flags() {
        return Arrays.stream(NodeOption.values()).map(NodeOption::flag).toList();
    }

    /** The rows of the page's option table, by flag; each row as its four trimmed cells. */
    private static Map<String, List<String>> optionRows(String markdown) {
        Map<String, List<String>> rows = new HashMap<>();
        boolean inTable = false;
        for (String line : markdown.split("\n")) {
            String trimmed = line.trim();
            if (!trimmed.startsWith("|")) {
                inTable = false;
                continue;
            }
            List<String> cells = Arrays.stream(trimmed.substring(1, trimmed.length() - 1).split("\\|", -1))
                    .map(String::trim)
                    .toList();
            if (!inTable) {
                assertThat(cells).as("table header").containsExactly("option", "env var", "default", "meaning");
                inTable = true;
                continue;
            }
            if (cells.stream().allMatch(c -> c.matches(":?-+:?"))) {
                continue; // the separator row
            }
            assertThat(cells).as("row %s", trimmed).hasSize(4);
            String flag = cells.get(0).replace("`", "").split(" ")[0];
            assertThat(rows.put(flag, cells)).as("%s is listed once", flag).isNull();
        }
        return rows;
    }

    private static String unescapeHtml(String s) {
        return s.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    }

    /**
     * The repository root: the nearest directory, from the working directory up (Surefire runs in
     * {@code node/}), that holds {@code docs/} and a {@code pom.xml} listing {@code <modules>}.
     */
    static Path repositoryRoot() throws IOException {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path pom = dir.resolve("pom.xml");
            if (Files.isDirectory(dir.resolve("docs")) && Files.isRegularFile(pom)
                    && Files.readString(pom, StandardCharsets.UTF_8).contains("<modules>")) {
                return dir;
            }
        }
        throw new AssertionError("no repository root (docs/ and a pom.xml with <modules>) above "
                + Path.of("").toAbsolutePath());
    }

    @Test
    void theRepositoryRootIsTheParentBuild() throws IOException {
        Path root = repositoryRoot();
        assertThat(root.resolve("node/pom.xml")).isRegularFile();
        assertThat(Files.readString(root.resolve("pom.xml"), StandardCharsets.UTF_8)).contains("<module>node</module>");
    }
}
