package io.kvorum.node;

import io.kvorum.node.admin.RepairStorageCommand;
import io.kvorum.node.admin.RestoreCommand;
import io.kvorum.node.admin.StatusCommand;
import io.kvorum.node.config.ConfigException;
import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import io.kvorum.node.storage.LevelDbNativeLibrary;
import io.kvorum.node.time.Clock;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * {@code java -jar kvorum-node.jar [options]}: parses the command line of docs/operations.md#starting-nodes and runs a node
 * until SIGTERM or SIGINT.
 *
 * <p>The picocli model is built from {@link NodeOption}, so the flags, their {@code KVORUM_*}
 * variables, and {@code --help} all come from one table. A flag wins over its variable. Any bad
 * option exits with status 2 and one line on stderr; a node that cannot start exits with 1.
 *
 * <p>{@code java -jar kvorum-node.jar status [URL]} runs no node: it prints the cluster as the node
 * at URL sees it ({@link StatusCommand}), so the one jar operators have also inspects a cluster;
 * {@code java -jar kvorum-node.jar repair-storage DATA_DIR} salvages a stopped node's corrupt store
 * ({@link RepairStorageCommand}); {@code java -jar kvorum-node.jar restore DIR URL} loads a backup into a
 * running cluster ({@link RestoreCommand}).
 */
public final class Main {

    static final int EXIT_OK = 0;
    static final int EXIT_STARTUP_FAILED = 1;
    static final int EXIT_BAD_OPTIONS = 2;
    private static final String NAME = "kvorum-node";
    static final String LOG_LEVEL = "KVORUM_LOG_LEVEL";
    private static final List<String> LOG_LEVELS = List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR");

    private Main() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals(StatusCommand.NAME)) {
            System.exit(StatusCommand.run(Arrays.asList(args).subList(1, args.length), System.out, System.err,
                    System.currentTimeMillis()));
            return;
        }
        if (args.length > 0 && args[0].equals(RepairStorageCommand.NAME)) {
            System.exit(RepairStorageCommand.run(Arrays.asList(args).subList(1, args.length), System.out, System.err));
            return;
        }
        if (args.length > 0 && args[0].equals(RestoreCommand.NAME)) {
            System.exit(RestoreCommand.run(Arrays.asList(args).subList(1, args.length), System.out, System.err));
            return;
        }
        Map<String, String> env = System.getenv();
        NodeConfig config;
        try {
            config = parse(args, env, System.out);
        } catch (ConfigException e) {
            System.err.println(NAME + ": " + e.getMessage());
            System.exit(EXIT_BAD_OPTIONS);
            return;
        }
        if (config == null) {
            System.exit(EXIT_OK); // --help or --version
            return;
        }
        routeJavaUtilLogging();
        ShutdownSignals signals = ShutdownSignals.install(Thread.currentThread());
        LevelDbNativeLibrary.installIn(config.dataDir().resolve("native"));
        KvorumNode node;
        try {
            node = KvorumNode.start(config, clock());
        } catch (KvorumNode.StartupException | RuntimeException e) {
            if (signals.stopRequested()) { // what failed was the start a signal cut short
                LoggerFactory.getLogger(Main.class).info("node stopped before it had started");
                System.exit(EXIT_OK);
                return;
            }
            if (e instanceof RuntimeException unexpected) {
                throw unexpected;
            }
            System.err.println(NAME + ": " + e.getMessage());
            System.exit(EXIT_STARTUP_FAILED);
            return;
        }
        try {
            signals.runUntilTerminated(() -> {
                node.close();
                return EXIT_OK;
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            node.close();
        }
    }

    /**
     * Sends what libraries log through java.util.logging (gRPC's core does) to the node's log, in
     * its format and under its levels ({@code logback.xml}), instead of stderr in two lines a record.
     */
    static void routeJavaUtilLogging() {
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
    }

    /**
     * {@code KVORUM_LOG_LEVEL}, read by {@code logback.xml}: logback takes a value it does not know,
     * an empty one too, for {@code DEBUG}, so a typo turned on the level that logs the most.
     */
    private static void checkLogLevel(String level) throws ConfigException {
        if (level != null && !LOG_LEVELS.contains(level.toUpperCase(Locale.ROOT))) {
            throw new ConfigException(LOG_LEVEL + " must be one of " + String.join(", ", LOG_LEVELS) + ", got '"
                    + level + "'");
        }
    }

    /**
     * Parses arguments and environment into a configuration.
     *
     * @return the configuration, or null when {@code --help} or {@code --version} was answered on {@code out}
     * @throws ConfigException with the one-line message to print
     */
    static NodeConfig parse(String[] args, Map<String, String> env, PrintStream out) throws ConfigException {
        CommandLine cli = new CommandLine(commandSpec());
        ParseResult result;
        try {
            result = cli.parseArgs(args);
        } catch (ParameterException e) {
            throw new ConfigException(e.getMessage() + " (see --help)");
        }
        if (result.isUsageHelpRequested()) {
            cli.usage(out);
            return null;
        }
        if (result.isVersionHelpRequested()) {
            cli.printVersionHelp(out);
            return null;
        }
        checkLogLevel(env.get(LOG_LEVEL));
        Map<NodeOption, String> raw = new EnumMap<>(NodeOption.class);
        Set<NodeOption> fromEnvironment = EnumSet.noneOf(NodeOption.class);
        for (NodeOption o : NodeOption.values()) {
            if (result.hasMatchedOption(o.flag())) {
                raw.put(o, result.matchedOptionValue(o.flag(), (String) null));
            } else if (env.containsKey(o.envVar())) {
                raw.put(o, env.get(o.envVar()));
                fromEnvironment.add(o);
            }
        }
        return NodeConfig.fromRaw(raw, fromEnvironment);
    }

    /** The picocli model of the command line, derived from {@link NodeOption}. */
    static CommandSpec commandSpec() {
        CommandSpec spec = CommandSpec.create().name(NAME).mixinStandardHelpOptions(true)
                .version(NAME + " " + versionString());
        spec.usageMessage()
                .description("Runs one node of a Kvorum cluster. Every option can also be set by its environment "
                        + "variable; a flag wins over its variable.")
                .footer("", "With no options, a single-node cluster on 127.0.0.1:8080 with its data in ./data/n1.",
                        "", "kvorum-node status [URL] [--ca FILE]: print the cluster as the node at URL (default "
                                + StatusCommand.DEFAULT_URL + ") sees it; exits 0 when every member is up, 1 when one is not, "
                                + "2 when the node cannot be reached.",
                        "", "kvorum-node repair-storage DATA_DIR: salvage the store of a stopped node whose log says a "
                                + "file is corrupt (docs/operations.md, \"A corrupt data file\").",
                        "", "kvorum-node restore DIR URL [--auth-token-file FILE] [--tls-ca FILE] [--rate N]: load the backup "
                                + "in DIR into the running cluster of URL (docs/operations.md, \"Restore\").");
        for (NodeOption o : NodeOption.values()) {
            String description = o.doc()
                    + (o.defaultValue() != null ? " Default: " + o.defaultValue() + "." : "")
                    + " Env: " + o.envVar() + ".";
            OptionSpec.Builder option = OptionSpec.builder(o.flag()).type(String.class).description(description);
            if (o.isSwitch()) {
                option.arity("0..1").paramLabel("true|false").fallbackValue("true");
            } else {
                option.arity("1").paramLabel(o.valueLabel());
            }
            spec.addOption(option.build());
        }
        return spec;
    }

    private static String versionString() {
        String v = Main.class.getPackage().getImplementationVersion();
        return v != null ? v : "development build";
    }

    /**
     * A test hook, not an option: the system property {@value #CLOCK_SHIFT_PROPERTY} (milliseconds)
     * shifts the node's wall clock, so that process tests can run a node whose clock is off
     * (docs/architecture.md#test-hooks). Logged at WARN when set.
     */
    static Clock clock() {
        long shift = Long.getLong(CLOCK_SHIFT_PROPERTY, 0L);
        if (shift == 0) {
            return Clock.SYSTEM;
        }
        LoggerFactory.getLogger(Main.class).warn("test hook {}: this node's wall clock runs {} ms off the machine's",
                CLOCK_SHIFT_PROPERTY, shift);
        return Clock.SYSTEM.shiftedBy(shift);
    }

    /** See {@link #clock()}. */
    static final String CLOCK_SHIFT_PROPERTY = "kvorum.test.clockShiftMillis";
}
