package io.kvorum.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvorum.node.config.NodeConfig;
import io.kvorum.node.config.NodeOption;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/operations.md#starting-nodes: a data dir that cannot be used is one line that says what is wrong, in words. */
class DataDirMessageTest {

    @TempDir
    Path tmp;

    private String messageFor(IOException failure) throws Exception {
        NodeConfig config = NodeConfig.fromRaw(Map.of(NodeOption.DATA_DIR, tmp.resolve("data").toString()));
        return KvorumNode.dataDirUnusable(config, failure).getMessage();
    }

    @Test
    void theJdksReasonlessFileErrorsAreSaidInWordsNotByTheirClassNames() throws Exception {
        // Files.createDirectories under /proc fails this way on Linux, with no reason of its own.
        assertThat(messageFor(new NoSuchFileException("/proc/foo")))
                .isEqualTo("cannot use data dir " + tmp.resolve("data") + ": /proc/foo: no such file or directory,"
                        + " and it cannot be created there");
        assertThat(messageFor(new NotDirectoryException("/x/file"))).endsWith(": /x/file: not a directory")
                .doesNotContain("Exception");
    }
}
