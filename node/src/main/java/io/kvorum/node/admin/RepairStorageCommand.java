package io.kvorum.node.admin;

import io.kvorum.node.storage.LevelDbNativeLibrary;
import io.kvorum.node.storage.StoreRepair;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code java -jar kvorum-node.jar repair-storage DATA_DIR}: salvages the store of a stopped node
 * whose log said a file was corrupt ({@link StoreRepair}), and says what to do next. Exit status
 * {@value #EXIT_REPAIRED} when the store was repaired, {@value #EXIT_FAILED} with one line on
 * stderr otherwise (bad arguments, no store there, a node still running on it).
 */
public final class RepairStorageCommand {

    public static final String NAME = "repair-storage";
    static final String USAGE = "usage: kvorum-node.jar repair-storage DATA_DIR (the stopped node's --data-dir)";
    static final int EXIT_REPAIRED = 0;
    static final int EXIT_FAILED = 2;

    private RepairStorageCommand() {
    }

    public static int run(List<String> args, PrintStream out, PrintStream err) {
        if (args.equals(List.of("--help")) || args.equals(List.of("-h"))) {
            out.println(USAGE);
            return EXIT_REPAIRED;
        }
        if (args.size() != 1 || args.get(0).startsWith("-")) {
            err.println(USAGE);
            return EXIT_FAILED;
        }
        Path dataDir = Path.of(args.get(0));
        if (!Files.isDirectory(dataDir)) {
            err.println("kvorum repair-storage: " + dataDir + " is not a directory; " + USAGE);
            return EXIT_FAILED;
        }
        try {
            LevelDbNativeLibrary.installIn(dataDir.resolve("native"));
            StoreRepair.Outcome outcome = StoreRepair.repair(dataDir);
            List<String> setAside = outcome.tablesSetAside();
            out.println(String.format(Locale.ROOT, "repaired %s: %s; %d record(s) readable", outcome.database(),
                    setAside.isEmpty() ? "no damaged table" : setAside.size() + " damaged table(s) set aside in "
                            + outcome.database().resolve("lost") + ": " + String.join(", ", setAside),
                    outcome.records()));
            if (!setAside.isEmpty()) {
                out.println("Start the node again, then run POST /v0/repair on it: its peers send it the records those "
                        + "tables held (a single node has no copy to take them from).");
            }
            return EXIT_REPAIRED;
        } catch (IOException | RuntimeException e) {
            err.println("kvorum repair-storage: " + dataDir + ": " + e.getMessage());
            return EXIT_FAILED;
        }
    }
}
