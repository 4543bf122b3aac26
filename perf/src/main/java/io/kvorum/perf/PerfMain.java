package io.kvorum.perf;

import io.kvorum.perf.ycsb.YcsbCommand;
import java.io.IOException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code ./kvorum perf}: the measuring workflow as commands. Each subcommand writes a run folder with
 * a Markdown report; see perf/README.md.
 */
@Command(name = "kvorum perf", mixinStandardHelpOptions = true, versionProvider = PerfMain.Version.class,
        description = "Load, profile and report on Kvorum (wrk2, async-profiler, YCSB), and measure it beside Cassandra and etcd.",
        subcommands = {RunCommand.class, SearchCommand.class, CompareCommand.class, YcsbCommand.class, JoinCommand.class,
                BackupCommand.class, PeersCommand.class, DriverCommand.class, NginxCommand.class, NettyCommand.class})
public final class PerfMain implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** No subcommand: a usage error, as an unknown one is. */
    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is missing: run, search, compare, ycsb, "
                + "join, backup, peers, driver, nginx or netty");
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * The command line as {@code ./kvorum perf} runs it: a {@link UsageException} is one line and
     * exit status 2; an {@link IOException} (a preload the nodes refused, a tool that failed, a
     * file that could not be written: what the environment did, each with a message that says
     * what) is one line and exit status 1. Anything else is a bug, with its stack trace.
     */
    static CommandLine commandLine() {
        return new CommandLine(new PerfMain()).setExecutionExceptionHandler((e, cli, parsed) -> {
            if (e instanceof UsageException) {
                cli.getErr().println(cli.getCommandSpec().qualifiedName() + ": " + e.getMessage());
                return 2;
            }
            if (e instanceof IOException && e.getMessage() != null) {
                cli.getErr().println(cli.getCommandSpec().qualifiedName() + ": " + e.getMessage());
                return 1;
            }
            throw e;
        });
    }

    /** The version of the perf jar, as its manifest records it. */
    public static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = PerfMain.class.getPackage().getImplementationVersion();
            return new String[] {"kvorum perf " + (version != null ? version : "(built from source, version not recorded)")};
        }
    }
}
