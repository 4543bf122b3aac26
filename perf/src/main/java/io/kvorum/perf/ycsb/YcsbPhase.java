package io.kvorum.perf.ycsb;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One run of YCSB's client ({@code site.ycsb.Client}) with the Kvorum binding: the load phase or
 * one workload's transaction phase, in a child JVM on this process's class path (the perf jar).
 *
 * <p>A child JVM because YCSB's client ends with {@code System.exit}, keeps static state
 * (measurements) between runs, and should not share a heap or JIT with the command that
 * orchestrates the run. Its stdout (the measurements) goes to {@code <name>.txt} and its stderr
 * (progress every 10 s, the binding's error log) to {@code <name>.log} in the run folder.
 *
 * @param name       the phase's name in file names: {@code load}, {@code workloada} ...
 * @param load       true for the load phase ({@code -load}), false for transactions ({@code -t})
 * @param properties YCSB properties given with {@code -p}, after the workload file, so they win
 */
record YcsbPhase(String name, Path workloadFile, boolean load, int threads, int target,
                 Map<String, String> properties) {

    /** Hdr histograms give percentiles; these are the ones reported. */
    static final String PERCENTILES = "50,95,99,99.9";

    YcsbPhase {
        properties = new LinkedHashMap<>(properties);
    }

    /** The child's command line. */
    List<String> command(String javaExecutable, String classPath) {
        List<String> command = new ArrayList<>(List.of(javaExecutable, "-Xmx1g", "-cp", classPath, "site.ycsb.Client",
                load ? "-load" : "-t", "-db", KvorumDB.class.getName(), "-P", workloadFile.toString()));
        Map<String, String> all = new LinkedHashMap<>(properties);
        all.put("measurementtype", "hdrhistogram");
        all.put("hdrhistogram.percentiles", PERCENTILES);
        all.forEach((k, v) -> {
            command.add("-p");
            command.add(k + "=" + v);
        });
        command.addAll(List.of("-threads", Integer.toString(threads)));
        if (target > 0) {
            command.addAll(List.of("-target", Integer.toString(target)));
        }
        command.add("-s");
        return command;
    }

    /** What a finished phase left: its measurements, or why there are none. */
    record Outcome(YcsbPhase phase, List<String> command, int exitCode, YcsbOutput output, String failure,
                   Path stdout, Path stderr) {
        boolean succeeded() {
            return output != null;
        }
    }

    /**
     * Runs the phase to its end and parses what it printed. Never throws for a failed phase: the
     * outcome says what failed (exit code, no measurements) and points at its log.
     */
    Outcome run(ChildProcesses children, String javaExecutable, String classPath, Path runDir)
            throws IOException, InterruptedException {
        List<String> command = command(javaExecutable, classPath);
        Path stdout = runDir.resolve(name + ".txt");
        Path stderr = runDir.resolve(name + ".log");
        Process process = children.start(new ProcessBuilder(command)
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile()));
        int exit;
        try {
            exit = process.waitFor();
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
        try {
            YcsbOutput output = YcsbOutput.parse(Files.readAllLines(stdout, StandardCharsets.UTF_8));
            String failure = exit != 0 ? "YCSB exited with " + exit + " (see " + stderr + ")" : incomplete(output);
            return new Outcome(this, command, exit, failure == null ? output : null, failure, stdout, stderr);
        } catch (IllegalArgumentException e) {
            return new Outcome(this, command, exit, null, e.getMessage() + " (exit " + exit + "; see " + stderr + ")",
                    stdout, stderr);
        }
    }

    /**
     * Why a finished phase is not a measurement, or null. A load must insert every record (YCSB
     * stops a loading thread at its first failed insert, so a short load leaves holes the
     * workloads would read as NOT_FOUND); a workload must have had at least one OK.
     */
    private String incomplete(YcsbOutput output) {
        if (load) {
            long inserted = output.operations().containsKey("INSERT") ? output.operations().get("INSERT").count() : 0;
            long records = Long.parseLong(properties.getOrDefault("recordcount", "0"));
            return inserted < records ? "loaded only " + inserted + " of " + records + " records (see " + name + ".log)" : null;
        }
        long ok = output.operations().values().stream().mapToLong(op -> op.returns().getOrDefault("OK", 0L)).sum();
        return ok == 0 ? "no operation returned OK (see " + name + ".log)" : null;
    }
}
