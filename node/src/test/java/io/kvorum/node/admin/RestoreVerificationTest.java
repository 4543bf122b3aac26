package io.kvorum.node.admin;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.backup.BackupFileWriter;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.model.Record;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code kvorum restore} refuses before it contacts a cluster: its arguments, and backups that do not match their manifests. */
class RestoreVerificationTest {

    @TempDir
    Path tmp;

    private Path backupOfOneMember() throws Exception {
        Path dir = tmp.resolve("b");
        RestoreCommandTest.writeMember(dir, "n1", Map.of("k", Record.value(1L << 16, "n1", "v".getBytes(UTF_8), 0)), 0);
        return dir;
    }

    @Test
    void aManifestWhoseCountDiffersFromItsFileNamesTheFile() throws Exception {
        Path dir = backupOfOneMember();
        BackupManifest m = BackupManifest.read(dir.resolve("n1"));
        BackupManifest.FileEntry f = m.files().get(0);
        new BackupManifest(m.format(), m.backup(), m.node(), m.cluster(), m.startedAt(), m.finishedAt(), 2, m.bytes(),
                m.membership(), List.of(new BackupManifest.FileEntry(f.name(), f.bytes(), f.sha256(), 2)))
                .writeTo(dir.resolve("n1"));

        assertThatThrownBy(() -> RestoreCommand.verify(dir)).isInstanceOf(RestoreCommand.Stop.class)
                .hasMessageStartingWith(dir.resolve("n1").resolve(BackupFileWriter.fileName(0)).toString())
                .hasMessageContaining("holds 1 entries, the manifest says 2");
        assertThat(RestoreCommand.verify(backupOfOtherName())).hasSize(1);
    }

    private Path backupOfOtherName() throws Exception {
        Path dir = tmp.resolve("other");
        RestoreCommandTest.writeMember(dir, "n2", Map.of("k", Record.tombstone(1L << 16, "n2")), 0);
        return dir;
    }

    @Test
    void aFolderWithoutMemberFoldersIsRefused() throws Exception {
        Files.createDirectories(tmp.resolve("empty"));
        assertThatThrownBy(() -> RestoreCommand.verify(tmp.resolve("empty"))).hasMessageContaining("holds no member folder");
    }

    @Test
    void badArgumentsExit2WithTheUsage() throws Exception {
        Path dir = backupOfOneMember();
        for (List<String> args : List.of(List.of(dir.toString()), List.of(dir.toString(), "ftp://x"),
                List.of(dir.toString(), "http://127.0.0.1:1", "--rate", "0"),
                List.of(dir.toString(), "http://127.0.0.1:1", "--rate"),
                List.of(dir.toString(), "http://127.0.0.1:1", "--what", "x"),
                List.of(tmp.resolve("absent").toString(), "http://127.0.0.1:1"))) {
            java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
            int exit = RestoreCommand.run(args, new java.io.PrintStream(new java.io.ByteArrayOutputStream()),
                    new java.io.PrintStream(err, true, UTF_8), false, System::nanoTime);
            assertThat(exit).as("%s", args).isEqualTo(RestoreCommand.EXIT_BAD);
            assertThat(err.toString(UTF_8).lines().count()).as("%s", args).isEqualTo(1);
        }
    }
}
