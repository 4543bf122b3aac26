package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose LevelDB files lost their {@code CURRENT} does not start on them (LevelDB would open
 * an empty database and delete them) and says in one line what to do: repair the records, drop the
 * hints.
 */
class StartupOnDamagedStoreTest {

    @TempDir
    Path root;

    /** Where {@link TestNode} puts the node's data dir. */
    private Path dataDir() {
        return root.resolve("node");
    }

    @Test
    void recordsThatLostTheirCurrentNameRepairStorage() throws Exception {
        Files.createDirectories(dataDir().resolve("records"));
        Files.writeString(dataDir().resolve("records").resolve("000003.log"), "a log LevelDB would delete");

        assertThatThrownBy(() -> TestNode.start(root).close()).isInstanceOf(KvorumNode.StartupException.class)
                .hasMessageContaining("no CURRENT file").hasMessageContaining("repair-storage " + dataDir());
        assertThat(dataDir().resolve("records").resolve("000003.log")).as("kept").exists();
    }

    @Test
    void hintsThatLostTheirCurrentAreSaidToBeExpendable() throws Exception {
        Files.createDirectories(dataDir().resolve("hints"));
        Files.writeString(dataDir().resolve("hints").resolve("000003.log"), "a log LevelDB would delete");

        assertThatThrownBy(() -> TestNode.start(root).close()).isInstanceOf(KvorumNode.StartupException.class)
                .hasMessageContaining("no CURRENT file").hasMessageContaining("hints are expendable: delete "
                        + dataDir().resolve("hints"));
    }
}
