package io.kvorum.perf.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** The commit the measured build comes from, and whether the work tree had uncommitted changes. */
public record GitInfo(String commit, boolean dirty) {

    public static GitInfo of(Path repository) {
        String commit = git(repository, "rev-parse", "HEAD");
        String status = git(repository, "status", "--porcelain", "--untracked-files=no");
        return new GitInfo(commit.isEmpty() ? "unknown" : commit, !status.isEmpty());
    }

    @Override
    public String toString() {
        return commit + (dirty ? " (dirty: uncommitted changes)" : "");
    }

    private static String git(Path dir, String... args) {
        try {
            String[] command = new String[args.length + 1];
            command[0] = "git";
            System.arraycopy(args, 0, command, 1, args.length);
            Process p = new ProcessBuilder(command).directory(dir.toAbsolutePath().toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readNBytes(64 * 1024), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                return "";
            }
            return out;
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
