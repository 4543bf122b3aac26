package io.kvorum.node.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableFilesTest {

    @TempDir
    Path dir;

    @Test
    void aReplaceAndALinkForceTheirDirectory() throws Exception {
        Path target = Files.writeString(dir.resolve("state"), "old");
        Path aside = dir.resolve("state.tmp");
        DurableFiles.writeForced(aside, "new");
        long before = DurableFiles.directoriesForced();

        DurableFiles.replaceForced(aside, target);

        assertThat(target).hasContent("new");
        assertThat(aside).doesNotExist();
        assertThat(DurableFiles.directoriesForced()).isGreaterThan(before);

        long beforeLink = DurableFiles.directoriesForced();
        DurableFiles.linkForced(dir.resolve("linked"), target);
        assertThat(dir.resolve("linked")).hasContent("new");
        assertThat(DurableFiles.directoriesForced()).isGreaterThan(beforeLink);
        assertThatThrownBy(() -> DurableFiles.linkForced(target, dir.resolve("linked")))
                .isInstanceOf(FileAlreadyExistsException.class);
    }
}
