package io.kvorum.perf.load;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One wrk2/wrk invocation: what to send, how hard and for how long. {@link #command} and
 * {@link #environment} are exactly what is run (and printed in the report).
 *
 * @param rate requests per second in total (ignored by closed-loop wrk)
 */
public record LoadSpec(Workload workload, Path scriptDir, URI target, int keys, int valueBytes, Integer ack, Integer from,
                       double skew, double readRatio, int rate, Duration duration, int connections, int threads) {

    public List<String> command(LoadTool tool) {
        List<String> command = new ArrayList<>(List.of(tool.binary().toString(),
                "-t" + threads, "-c" + connections, "-d" + Math.max(1, duration.toSeconds()) + "s"));
        if (tool.fixedRate()) {
            command.add("-R" + rate);
        }
        command.add("--latency");
        command.add("-s");
        command.add(scriptDir.resolve(workload.script()).toString());
        command.add(target.toString());
        return command;
    }

    /** The variables the perf/wrk scripts read (see perf/wrk/lib/kvorum.lua). */
    public Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KEYS", Integer.toString(keys));
        env.put("VALUE_BYTES", Integer.toString(valueBytes));
        if (ack != null) {
            env.put("ACK", ack.toString());
        }
        if (from != null) {
            env.put("FROM", from.toString());
        }
        env.put("SKEW", Double.toString(skew));
        if (workload == Workload.MIXED) {
            env.put("READ_RATIO", Double.toString(readRatio));
        }
        return env;
    }

    public LoadSpec withRate(int newRate) {
        return new LoadSpec(workload, scriptDir, target, keys, valueBytes, ack, from, skew, readRatio, newRate, duration,
                connections, threads);
    }

    public LoadSpec withDuration(Duration newDuration) {
        return new LoadSpec(workload, scriptDir, target, keys, valueBytes, ack, from, skew, readRatio, rate, newDuration,
                connections, threads);
    }

    /** The command line with its environment, as one shell line, for reports. */
    public String shellLine(LoadTool tool) {
        StringBuilder line = new StringBuilder();
        environment().forEach((k, v) -> line.append(k).append('=').append(v).append(' '));
        return line.append(String.join(" ", command(tool))).toString();
    }
}
