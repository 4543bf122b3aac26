package io.kvorum.perf;

import io.kvorum.perf.ycsb.YcsbCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code ./kvorum perf}: the measuring workflow as commands. Each subcommand writes a run folder with
 * a Markdown report; see perf/README.md.
 */
@Command(name = "kvorum perf", mixinStandardHelpOptions = true,
        description = "Load, profile and report on Kvorum (wrk2, async-profiler, YCSB).",
        subcommands = {RunCommand.class, SearchCommand.class, CompareCommand.class, YcsbCommand.class, JoinCommand.class,
                DriverCommand.class, NginxCommand.class, NettyCommand.class})
public final class PerfMain implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new PerfMain()).execute(args));
    }
}
