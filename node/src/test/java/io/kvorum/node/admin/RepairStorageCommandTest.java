package io.kvorum.node.admin;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.model.Record;
import io.kvorum.node.storage.LevelDbStore;
import io.kvorum.node.storage.StorageService;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvorum-node.jar repair-storage DATA_DIR}: what it says and how it exits. The salvage itself
 * is {@code StoreRepairTest}'s.
 */
class RepairStorageCommandTest {

    @TempDir
    Path dataDir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return RepairStorageCommand.run(List.of(args), new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8));
    }

    @Test
    void aHealthyStoreIsRepairedWithNothingSetAside() throws Exception {
        try (StorageService storage = new StorageService(LevelDbStore.open(dataDir.resolve("records"), false, 8 << 20),
                1, 16)) {
            for (int i = 0; i < 3; i++) {
                storage.write(("k" + i).getBytes(UTF_8), Record.value(i + 1, "n1", new byte[] {1}, Record.NEVER_EXPIRES))
                        .join();
            }
        }

        assertThat(run(dataDir.toString())).isEqualTo(RepairStorageCommand.EXIT_REPAIRED);
        assertThat(out.toString(UTF_8)).isEqualTo("repaired " + dataDir.resolve("records")
                + ": no damaged table; 3 record(s) readable\n");
        assertThat(err.toString(UTF_8)).isEmpty();
    }

    @Test
    void withoutAStoreItExitsTwoWithOneLine() {
        assertThat(run(dataDir.toString())).isEqualTo(RepairStorageCommand.EXIT_FAILED);
        assertThat(err.toString(UTF_8).lines().toList()).singleElement().asString()
                .startsWith("kvorum repair-storage: " + dataDir + ": no Kvorum store in " + dataDir);
        assertThat(out.toString(UTF_8)).isEmpty();
    }

    @Test
    void badArgumentsExitTwoWithUsage() {
        assertThat(run()).isEqualTo(RepairStorageCommand.EXIT_FAILED);
        assertThat(run("--all")).isEqualTo(RepairStorageCommand.EXIT_FAILED);
        assertThat(run("a", "b")).isEqualTo(RepairStorageCommand.EXIT_FAILED);
        assertThat(run(dataDir.resolve("missing").toString())).isEqualTo(RepairStorageCommand.EXIT_FAILED);
        assertThat(err.toString(UTF_8).lines().toList()).hasSize(4).allMatch(l -> l.contains(RepairStorageCommand.USAGE));
    }

    @Test
    void helpIsTheUsageOnStandardOutput() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString(UTF_8).strip()).isEqualTo(RepairStorageCommand.USAGE);
        assertThat(err.toString(UTF_8)).isEmpty();
    }
}
