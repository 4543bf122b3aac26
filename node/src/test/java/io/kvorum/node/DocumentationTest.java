package io.kvorum.node;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the tables of {@code docs/} true, as {@link NodeOptionTest} does for
 * {@code docs/configuration.md}: each test reads a table from a page and the facts it lists from
 * the code (its sources, or a running node), and fails when the two differ. Change both together.
 *
 * <p>Facts are read from sources where the code keeps them as literals (routed paths, parameter
 * names, thread names, proto services), so that adding one without documenting it fails here.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DocumentationTest {

    private static final String MAIN = "node/src/main/java/io/kvorum/node";

    // ---- docs/http-api.md ----

    @Test
    void theApiPageListsEveryPathTheRouterRoutes() throws IOException {
        Set<String> routed = matches(source("http/RequestRouter.java"), "case\\s+\"(/[^\"]*)\"\\s*->");
        assertThat(routed).as("paths routed by RequestRouter").isNotEmpty();

        Set<String> documented = firstCells(table("docs/http-api.md", "path", "methods", "success", "what it does"));
        assertThat(documented).as("the endpoint table of docs/http-api.md").containsExactlyInAnyOrderElementsOf(routed);
    }

    @Test
    void theApiPageGivesTheMethodsEachPathAllows(@TempDir Path dataDir) throws Exception {
        List<List<String>> endpoints = table("docs/http-api.md", "path", "methods", "success", "what it does");
        try (TestNode node = TestNode.start(dataDir)) {
            for (List<String> row : endpoints) {
                String path = unquote(row.get(0));
                List<String> methods = Arrays.stream(row.get(1).split(","))
                        .map(DocumentationTest::unquote)
                        .toList();

                HttpResponse<byte[]> refused = node.send("PATCH", path, null);
                assertThat(refused.statusCode()).as("PATCH %s", path).isEqualTo(405);
                assertThat(refused.headers().firstValue("Allow")).as("Allow of %s", path)
                        .hasValue(String.join(", ", methods));

                for (String method : methods) {
                    HttpResponse<byte[]> answer = node.send(method, path, method.equals("PUT") ? new byte[0] : null);
                    assertThat(answer.statusCode()).as("%s %s is routed", method, path).isNotEqualTo(405);
                    assertThat(new String(answer.body(), UTF_8)).as("%s %s", method, path).doesNotStartWith("unknown path");
                }
            }
        }
    }

    @Test
    void theApiPageListsEveryParameter() throws IOException {
        Matcher known = Pattern.compile("KNOWN\\s*=\\s*List\\.of\\(([^)]*)\\)").matcher(source("http/RequestParams.java"));
        assertThat(known.find()).as("RequestParams.KNOWN").isTrue();
        Set<String> parameters = matches(known.group(1), "\"([^\"]+)\"");
        assertThat(parameters).isNotEmpty();

        Set<String> documented = firstCells(table("docs/http-api.md", "parameter", "used by", "value", "default"));
        assertThat(documented).as("the parameter table of docs/http-api.md").containsExactlyInAnyOrderElementsOf(parameters);
    }

    @Test
    void theApiPageListsEveryStatusTheHttpLayerAnswers() throws Exception {
        Set<Integer> answered = new TreeSet<>();
        for (Path file : javaFiles(root().resolve(MAIN).resolve("http"))) {
            for (String constant : matches(Files.readString(file, UTF_8), "HttpResponseStatus\\.([A-Z_0-9]+)\\b")) {
                answered.add(((HttpResponseStatus) HttpResponseStatus.class.getField(constant).get(null)).code());
            }
        }
        assertThat(answered).as("statuses named in the http package").contains(200, 400, 405, 503, 504);

        Set<Integer> documented = new TreeSet<>();
        for (List<String> row : table("docs/http-api.md", "status", "when", "body")) {
            Matcher code = Pattern.compile("`(\\d{3}) [^`]+`").matcher(row.get(0));
            assertThat(code.matches()).as("status cell %s", row.get(0)).isTrue();
            int status = Integer.parseInt(code.group(1));
            assertThat(unquote(row.get(0))).isEqualTo(status + " " + HttpResponseStatus.valueOf(status).reasonPhrase());
            documented.add(status);
        }
        assertThat(documented).as("the status table of docs/http-api.md").containsAll(answered);
    }

    // ---- docs/architecture.md ----

    @Test
    void theArchitecturePageAndTheReadmeNameEveryModule() throws IOException {
        Set<String> modules = matches(Files.readString(root().resolve("pom.xml"), UTF_8), "<module>([^<]+)</module>");
        assertThat(modules).contains("node", "api");

        assertThat(firstCells(table("docs/architecture.md", "module", "artifact", "what it holds")))
                .as("the module table of docs/architecture.md").containsExactlyInAnyOrderElementsOf(modules);
        assertThat(firstCells(table("README.md", "module", "what")))
                .as("the layout table of README.md").containsExactlyInAnyOrderElementsOf(modules);
    }

    @Test
    void theArchitecturePageNamesEveryPackageOfTheNode() throws IOException {
        Path main = root().resolve("node/src/main/java");
        Set<String> packages = new TreeSet<>();
        for (Path file : javaFiles(main.resolve("io/kvorum/node"))) {
            packages.add(main.relativize(file.getParent()).toString().replace(file.getFileSystem().getSeparator(), "."));
        }
        assertThat(packages).contains("io.kvorum.node", "io.kvorum.node.transport.grpc");

        Set<String> documented = firstCells(table("docs/architecture.md", "package", "role"));
        assertThat(documented).as("the package table of docs/architecture.md").containsExactlyInAnyOrderElementsOf(packages);
    }

    @Test
    void theArchitecturePageNamesEveryThreadKvorumNames() throws IOException {
        Map<String, String> creators = new TreeMap<>(); // thread name prefix -> class that names it
        for (Path file : javaFiles(root().resolve(MAIN))) {
            String className = file.getFileName().toString().replace(".java", "");
            for (String prefix : matches(Files.readString(file, UTF_8),
                    "(?:new NamedThreadFactory|NodeThreads\\.\\w+)\\(\"([^\"]+)\"")) {
                creators.put(prefix, className);
            }
        }
        assertThat(creators).as("NamedThreadFactory names").containsKeys("net-io", "storage-writer");

        Map<String, String> documented = new TreeMap<>();
        for (List<String> row : table("docs/architecture.md", "thread", "created by", "what runs on it")) {
            String name = unquote(row.get(0));
            assertThat(name).as("thread cell %s", row.get(0)).endsWith("-N");
            documented.put(name.substring(0, name.length() - 2), unquote(row.get(1)));
        }
        assertThat(documented).as("the thread table of docs/architecture.md").isEqualTo(creators);
    }

    @Test
    void theArchitecturePageNamesEveryInternalCall() throws IOException {
        Set<String> calls = new TreeSet<>();
        Pattern token = Pattern.compile("^\\s*(service|rpc)\\s+(\\w+)", Pattern.MULTILINE);
        try (Stream<Path> protos = Files.walk(root().resolve("proto/src/main/proto"))) {
            for (Path proto : protos.filter(p -> p.toString().endsWith(".proto")).toList()) {
                String service = null;
                Matcher m = token.matcher(Files.readString(proto, UTF_8));
                while (m.find()) {
                    if (m.group(1).equals("service")) {
                        service = m.group(2);
                    } else {
                        calls.add(service + "." + m.group(2));
                    }
                }
            }
        }
        assertThat(calls).contains("Replication.Exchange");

        Set<String> documented = firstCells(table("docs/architecture.md", "service", "call", "what"));
        assertThat(documented).as("the protocol table of docs/architecture.md").containsExactlyInAnyOrderElementsOf(calls);
    }

    @Test
    void onlyTheTransportUsesGrpcAndOnlyHttpAndUtilUseNetty() throws IOException {
        Path main = root().resolve(MAIN);
        for (Path file : javaFiles(main)) {
            String pkg = main.relativize(file.getParent()).toString();
            String text = Files.readString(file, UTF_8);
            if (!pkg.equals("transport" + file.getFileSystem().getSeparator() + "grpc")) {
                assertThat(text).as("%s imports gRPC", file).doesNotContain("import io.grpc.");
            }
            if (!pkg.equals("http") && !pkg.equals("util")) {
                assertThat(text).as("%s imports Netty", file).doesNotContain("import io.netty.");
            }
        }
    }

    // ---- docs/operations.md ----

    @Test
    void theOperationsPageDescribesTheDataDirectory() throws IOException {
        Set<String> subdirectories = matches(source("KvorumNode.java"), "dataDir\\(\\)\\.resolve\\(\"([^\"]+)\"\\)");
        assertThat(subdirectories).contains("records");

        Set<String> documented = new TreeSet<>();
        for (List<String> row : table("docs/operations.md", "path", "what")) {
            documented.add(unquote(row.get(0)));
        }
        for (String dir : subdirectories) {
            assertThat(documented).as("the data directory table of docs/operations.md").contains(dir + "/");
        }
    }

    @Test
    void theOperationsPageGivesTheRoleEachRequestNeeds() throws IOException {
        Map<String, String> coded = new TreeMap<>();
        Matcher entry = Pattern.compile("entry\\(\"([A-Z]+ /[^\"]*)\",\\s*Role\\.([A-Z]+)\\)")
                .matcher(source("http/EndpointRoles.java"));
        while (entry.find()) {
            coded.put(entry.group(1), entry.group(2).toLowerCase(Locale.ROOT));
        }
        assertThat(coded).as("EndpointRoles' table").containsEntry("POST /v0/repair", "admin");
        Matcher open = Pattern.compile("OPEN = \"([^\"]+)\"").matcher(source("http/EndpointRoles.java"));
        assertThat(open.find()).as("EndpointRoles.OPEN").isTrue();
        coded.put(open.group(1), "none: no token needed");

        Map<String, String> documented = new TreeMap<>();
        for (List<String> row : table("docs/operations.md", "request", "least role")) {
            assertThat(documented.put(unquote(row.get(0)), unquote(row.get(1)))).as("%s is listed once", row.get(0)).isNull();
        }
        assertThat(documented).as("the role table of docs/operations.md").isEqualTo(coded);

        Set<String> routed = matches(source("http/RequestRouter.java"), "case\\s+\"(/[^\"]*)\"\\s*->");
        assertThat(documented.keySet().stream().map(r -> r.substring(r.indexOf(' ') + 1)).collect(Collectors.toSet()))
                .as("a row for every path the router routes").containsExactlyInAnyOrderElementsOf(routed);
    }

    // ---- links ----

    @Test
    void theReadmeLinksEveryPage() throws IOException {
        Set<String> links = new TreeSet<>();
        for (Link link : links(root().resolve("README.md"))) {
            links.add(link.target());
        }
        assertThat(links).contains("docs/http-api.md", "docs/operations.md", "docs/architecture.md",
                "docs/configuration.md");
    }

    @Test
    void noPageLinksOutsideTheRepositoryOrToAMissingFileOrHeading() throws IOException {
        Path root = root().toRealPath();
        List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        for (Path page : pages) {
            for (Link link : links(page)) {
                String target = link.target();
                if (target.matches("[a-z]+:.*")) {
                    continue; // http:, https:, mailto:
                }
                Path file = target.isEmpty() ? page : page.getParent().resolve(target).normalize();
                assertThat(file).as("%s links %s", root.relativize(page), link).startsWith(root).exists();
                if (link.anchor() != null && file.toString().endsWith(".md")) {
                    assertThat(headingAnchors(file)).as("headings of %s, linked from %s", file.getFileName(),
                            root.relativize(page)).contains(link.anchor());
                }
            }
        }
    }

    // ---- citations ----

    /**
     * A citation of a document the repository does not have: a section sign or a numbered section after the word
     * SPEC (across a line break and comment markers too), a numbered STYLE rule, or that document by name
     * ("SPEC" after "the").
     * Code and docs cite docs/ pages instead, or say the sentence they stood for.
     */
    private static final Pattern DANGLING_CITATION =
            Pattern.compile("\\bSPEC(?:'s)?[\\s#*/]*(?:§|section\\s*\\d)|\\bSTYLE[\\s#*/]*§?\\s*\\d|\\b[Tt]he SPEC\\b");

    @Test
    void noTrackedFileCitesADocumentTheRepositoryDoesNotHave() throws IOException {
        List<Path> files = trackedTextFiles();
        assertThat(files).as("tracked text files").contains(root().resolve("README.md"), root().resolve("pom.xml"));

        List<String> dangling = new ArrayList<>();
        for (Path file : files) {
            String text = new String(Files.readAllBytes(file), UTF_8);
            Matcher m = DANGLING_CITATION.matcher(text);
            while (m.find()) {
                int line = 1 + (int) text.substring(0, m.start()).chars().filter(c -> c == '\n').count();
                dangling.add(root().relativize(file) + ":" + line + ": " + m.group().replaceAll("\\s+", " "));
            }
        }
        assertThat(dangling).as("citations of SPEC or STYLE, which are not in the repository").isEmpty();
    }

    @Test
    void theCitationCheckFindsEachFormItLooksFor() {
        for (String cited : List.of("as SPEC" + " §3 says", "SPEC" + "\n# §7", "(STYLE" + " 12)", "of SPEC" + " section 6", "the " + "SPEC promises",
                "The " + "SPEC's 413")) {
            assertThat(DANGLING_CITATION.matcher(cited).find()).as(cited).isTrue();
        }
        for (String fine : List.of("CLUSTER_SPEC=n1", "MICROMETER_STYLE = x", "SPEC_FAMILIES", "docs/operations.md#metrics")) {
            assertThat(DANGLING_CITATION.matcher(fine).find()).as(fine).isFalse();
        }
    }

    /**
     * The repository's tracked files ({@code git ls-files}; the whole tree but build output when git
     * cannot answer, as in an unpacked source archive), less those with a NUL byte (binaries).
     */
    private static List<Path> trackedTextFiles() throws IOException {
        Path root = root();
        List<Path> files = new ArrayList<>();
        try {
            Process git = new ProcessBuilder("git", "ls-files", "-z").directory(root.toFile())
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String listing = new String(git.getInputStream().readAllBytes(), UTF_8);
            if (git.waitFor() == 0 && !listing.isEmpty()) {
                for (String name : listing.split("\0")) {
                    files.add(root.resolve(name));
                }
            }
        } catch (IOException e) {
            // no git: walk the tree below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        if (files.isEmpty()) {
            try (Stream<Path> walk = Files.walk(root)) {
                walk.filter(Files::isRegularFile)
                        .filter(p -> !root.relativize(p).toString().matches("(.*/)?(target|\\.git)/.*"))
                        .forEach(files::add);
            }
        }
        List<Path> text = new ArrayList<>();
        for (Path file : files) {
            if (Files.isRegularFile(file) && !isBinary(file)) {
                text.add(file);
            }
        }
        return text;
    }

    private static boolean isBinary(Path file) throws IOException {
        try (var in = Files.newInputStream(file)) {
            byte[] head = in.readNBytes(8192);
            for (byte b : head) {
                if (b == 0) {
                    return true;
                }
            }
            return false;
        }
    }

    // ---- helpers ----

    private record Link(String target, String anchor) {
        @Override
        public String toString() {
            return target + (anchor != null ? "#" + anchor : "");
        }
    }

    /** The Markdown links {@code [text](target#anchor)} of a page, outside fenced code blocks. */
    private static List<Link> links(Path page) throws IOException {
        List<Link> out = new ArrayList<>();
        Pattern link = Pattern.compile("\\]\\(([^)\\s]*)\\)");
        boolean fenced = false;
        for (String line : Files.readAllLines(page, UTF_8)) {
            if (line.trim().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher m = link.matcher(line);
            while (m.find()) {
                String target = m.group(1);
                int hash = target.indexOf('#');
                out.add(hash < 0 ? new Link(target, null) : new Link(target.substring(0, hash), target.substring(hash + 1)));
            }
        }
        return out;
    }

    /** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as '-'. */
    private static Set<String> headingAnchors(Path page) throws IOException {
        Set<String> anchors = new LinkedHashSet<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(page, UTF_8)) {
            if (line.trim().startsWith("```")) {
                fenced = !fenced;
            } else if (!fenced && line.startsWith("#")) {
                String title = line.replaceFirst("^#+\\s*", "").trim().toLowerCase(Locale.ROOT);
                anchors.add(title.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return anchors;
    }

    /**
     * The body rows of the table whose header is exactly {@code header}, each as its trimmed cells.
     * Fails unless the page has exactly one such table, with at least one row.
     */
    private static List<List<String>> table(String page, String... header) throws IOException {
        List<List<String>> rows = null;
        List<List<String>> current = null;
        boolean fenced = false;
        for (String line : Files.readAllLines(root().resolve(page), UTF_8)) {
            String trimmed = line.trim();
            if (trimmed.startsWith("```")) {
                fenced = !fenced;
            }
            if (fenced || !trimmed.startsWith("|")) {
                current = null;
                continue;
            }
            List<String> cells = cells(trimmed);
            if (current == null) {
                if (cells.equals(List.of(header))) {
                    assertThat(rows).as("one table with header %s in %s", List.of(header), page).isNull();
                    rows = new ArrayList<>();
                    current = rows;
                } else {
                    current = new ArrayList<>(); // another table: read past it
                }
                continue;
            }
            if (cells.stream().allMatch(c -> c.matches(":?-+:?"))) {
                continue;
            }
            if (current == rows) {
                assertThat(cells).as("row %s of %s", trimmed, page).hasSize(header.length);
            }
            current.add(cells);
        }
        assertThat(rows).as("a table with header %s in %s", List.of(header), page).isNotNull().isNotEmpty();
        return rows;
    }

    /** The cells of a table row; a '|' inside backticks does not split. */
    private static List<String> cells(String row) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean code = false;
        for (int i = 1; i < row.length() - (row.endsWith("|") ? 1 : 0); i++) {
            char c = row.charAt(i);
            if (c == '`') {
                code = !code;
            }
            if (c == '|' && !code) {
                cells.add(cell.toString().trim());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        cells.add(cell.toString().trim());
        return cells;
    }

    /** The first cells of a table's rows, without their backticks; each must be one code span. */
    private static Set<String> firstCells(List<List<String>> rows) {
        Set<String> out = new TreeSet<>();
        for (List<String> row : rows) {
            assertThat(row.get(0)).as("first cell of %s", row).matches("`[^`]+`");
            assertThat(out.add(unquote(row.get(0)))).as("%s is listed once", row.get(0)).isTrue();
        }
        return out;
    }

    private static String unquote(String cell) {
        return cell.trim().replace("`", "");
    }

    private static Set<String> matches(String text, String regex) {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static String source(String pathUnderNode) throws IOException {
        return Files.readString(root().resolve(MAIN).resolve(pathUnderNode), UTF_8);
    }

    private static List<Path> javaFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        }
    }

    private static Path root() throws IOException {
        return NodeOptionTest.repositoryRoot();
    }
}
