package io.kvorum.perf.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Runs wrk2/wrk once, keeps its full output in a file, and parses it. */
public final class LoadRunner {

    private final LoadTool tool;

    public LoadRunner(LoadTool tool) {
        this.tool = tool;
    }

    public LoadTool tool() {
        return tool;
    }

    /**
     * Runs {@code spec} to completion (bounded: its duration plus 60 s, then killed), writing what the
     * tool printed to {@code outputFile}.
     *
     * @throws IOException when the tool fails or prints no summary; the message holds its output
     */
    public WrkOutput run(LoadSpec spec, Path outputFile) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(spec.command(tool)).redirectErrorStream(true)
                .redirectOutput(outputFile.toFile());
        builder.environment().putAll(spec.environment());
        builder.environment().putAll(tool.environment());
        Process process = builder.start();
        try {
            if (!process.waitFor(spec.duration().toSeconds() + 60, TimeUnit.SECONDS)) {
                throw new IOException(tool.name() + " did not finish within its duration + 60 s; output in " + outputFile);
            }
        } finally {
            process.destroyForcibly();
        }
        String output = Files.readString(outputFile, StandardCharsets.UTF_8);
        if (process.exitValue() != 0) {
            throw new IOException(tool.name() + " exited with " + process.exitValue() + ":\n" + output);
        }
        return WrkOutputParser.parse(output);
    }
}
