package io.kvorum.perf.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The load generator binary: wrk2 (fixed rate, latency corrected for coordinated omission), or
 * Debian's wrk for closed-loop saturation runs. Found by {@link #findWrk2} / {@link #findWrk} and
 * recognised by its usage listing, since both are called "wrk" by their builds.
 */
public record LoadTool(Path binary, boolean fixedRate, Map<String, String> environment) {

    public static final String WRK2_MISSING =
            "wrk2 is not packaged; build giltene/wrk2 and put it on PATH or in WRK2";
    public static final String WRK_MISSING = "wrk is not installed; apt-get install wrk";

    /** Why {@link #findWrk2} found nothing: names a WRK2 that is set but is not wrk2. */
    public static String wrk2Missing(Map<String, String> env) {
        String configured = env.get("WRK2");
        return configured == null || configured.isBlank() ? WRK2_MISSING
                : "WRK2=" + configured + " is not wrk2 (" + (Files.isExecutable(Path.of(configured)) && !Files.isDirectory(Path.of(configured))
                        ? "its usage lists no -R, --rate" : "no executable file there") + "); build giltene/wrk2 and point WRK2 at its wrk";
    }

    /** wrk2 from env WRK2, else "wrk2" on PATH, if its usage lists {@code -R, --rate}. */
    public static Optional<LoadTool> findWrk2(Map<String, String> env) {
        String configured = env.get("WRK2");
        Optional<Path> candidate = configured != null && !configured.isBlank()
                ? Optional.of(Path.of(configured)) : onPath(env, "wrk2");
        return candidate.filter(LoadTool::listsRateOption).map(p -> new LoadTool(p, true));
    }

    /** Closed-loop wrk ("wrk" on PATH). */
    public static Optional<LoadTool> findWrk(Map<String, String> env) {
        return onPath(env, "wrk").map(p -> new LoadTool(p, false));
    }

    /** @param environment variables every run of the tool gets on top of its spec's (e.g. where the token is) */
    public LoadTool {
        environment = Map.copyOf(environment);
    }

    public LoadTool(Path binary, boolean fixedRate) {
        this(binary, fixedRate, Map.of());
    }

    /** This tool, whose runs also get {@code more} in their environment. */
    public LoadTool withEnvironment(Map<String, String> more) {
        Map<String, String> all = new java.util.HashMap<>(environment);
        all.putAll(more);
        return new LoadTool(binary, fixedRate, all);
    }

    public String name() {
        return fixedRate ? "wrk2" : "wrk";
    }

    static Optional<Path> onPath(Map<String, String> env, String name) {
        String path = env.getOrDefault("PATH", "");
        for (String dir : path.split(":")) {
            if (!dir.isEmpty()) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return Optional.empty();
    }

    /** wrk and wrk2 print their usage and exit 1 without a URL; only wrk2's lists -R, --rate. */
    static boolean listsRateOption(Path binary) {
        if (!Files.isExecutable(binary)) {
            return false;
        }
        try {
            Process p = new ProcessBuilder(binary.toString()).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readNBytes(64 * 1024);
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            return new String(out, StandardCharsets.UTF_8).contains("-R, --rate");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
