package io.kvorum.perf;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative Markdown link in README.md, docs/*.md, perf/README.md and perf/runs/README.md
 * points at a file or folder that exists (and, into a Markdown file, at one of its headings): the
 * run summaries perf/README.md cites are the only files of perf/runs that git keeps, and one must
 * not go while it is cited. The reports themselves are not checked: they link the plots and flame
 * graphs of their run, which stay on the machine that ran it.
 */
class DocLinksTest {

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @Test
    void relativeLinksResolve() throws IOException {
        Path root = repositoryRoot();
        List<Path> docs = new ArrayList<>(List.of(root.resolve("README.md"), root.resolve("perf/README.md"),
                root.resolve("perf/runs/README.md")));
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        List<String> checked = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (Path doc : docs) {
            for (String target : links(doc)) {
                checked.add(target);
                String problem = problem(doc, target);
                if (problem != null) {
                    broken.add(root.relativize(doc) + ": (" + target + ") " + problem);
                }
            }
        }
        assertThat(checked).as("links found").hasSizeGreaterThan(20);
        assertThat(broken).as("broken links").isEmpty();
    }

    /** The relative link targets of a Markdown file, outside fenced code blocks. */
    static List<String> links(Path doc) throws IOException {
        List<String> out = new ArrayList<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(doc, StandardCharsets.UTF_8)) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher m = LINK.matcher(line);
            while (m.find()) {
                String target = m.group(1);
                if (!target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) { // http:, https:, mailto: ...
                    out.add(target);
                }
            }
        }
        return out;
    }

    /** Why {@code target}, linked from {@code doc}, does not resolve; null when it does. */
    static String problem(Path doc, String target) throws IOException {
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path file = path.isEmpty() ? doc : doc.getParent().resolve(path).normalize();
        if (!Files.exists(file)) {
            return "no such file";
        }
        if (anchor != null && file.toString().endsWith(".md") && !anchors(file).contains(anchor)) {
            return "no heading #" + anchor + " in " + file.getFileName();
        }
        return null;
    }

    /** GitHub's anchors for the headings of a Markdown file. */
    static List<String> anchors(Path md) throws IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(md, StandardCharsets.UTF_8)) {
            if (line.startsWith("#")) {
                String text = line.replaceFirst("^#+\\s*", "").strip().toLowerCase(Locale.ROOT);
                out.add(text.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return out;
    }

    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isDirectory(dir.resolve("perf/runs")) && Files.exists(dir.resolve("README.md")))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("repository root above " + Path.of("").toAbsolutePath()).isNotNull();
        return dir;
    }
}
