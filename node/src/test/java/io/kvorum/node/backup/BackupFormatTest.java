package io.kvorum.node.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackupFormatTest {

    private static final String ID = "20261207-112233-0a1b2c";

    @TempDir
    Path dir;

    private static List<Entry> sample(int n) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] key = String.format("key-%05d", i).getBytes(StandardCharsets.UTF_8);
            Record r = switch (i % 3) {
                case 0 -> Record.value(1000L + i, "n1", ("value " + i).getBytes(StandardCharsets.UTF_8), 0);
                case 1 -> Record.tombstone(2000L + i, "n2");
                default -> Record.value(3000L + i, "n\u00e9", new byte[0], 1_800_000_000_000L + i);
            };
            entries.add(new Entry(key, r));
        }
        return entries;
    }

    private BackupManifest write(Path memberDir, List<Entry> entries, long fileLimit) throws IOException {
        try (BackupFileWriter writer = new BackupFileWriter(memberDir, fileLimit)) {
            for (Entry e : entries) {
                writer.write(e.key(), e.record());
            }
            List<BackupManifest.FileEntry> files = writer.finish();
            assertThat(writer.records()).isEqualTo(entries.size());
            BackupManifest m = BackupManifest.of(ID, "n1", "test", Instant.EPOCH, Instant.EPOCH.plusSeconds(1),
                    new BackupManifest.Membership(3, List.of(new ClusterView.Member("n1", "127.0.0.1", 1, 2, "normal"))),
                    files);
            m.writeTo(memberDir);
            assertThat(m.bytes()).isEqualTo(writer.bytes());
            return m;
        }
    }

    static List<Entry> readAll(Path memberDir) throws IOException {
        BackupManifest m = BackupManifest.verify(memberDir);
        List<Entry> entries = new ArrayList<>();
        for (BackupManifest.FileEntry f : m.files()) {
            try (BackupFileReader reader = BackupFileReader.open(memberDir.resolve(f.name()))) {
                for (Entry e; (e = reader.next()) != null; ) {
                    entries.add(e);
                }
                assertThat(reader.entries()).isEqualTo(f.records());
            }
        }
        return entries;
    }

    private static void assertSameEntries(List<Entry> actual, List<Entry> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.get(i).key()).isEqualTo(expected.get(i).key());
            Record a = actual.get(i).record();
            Record b = expected.get(i).record();
            assertThat(a).isEqualTo(b);
            assertThat(a.writer()).isEqualTo(b.writer());
        }
    }

    @Test
    void entriesRoundTripThroughFilesSplitAtTheLimit() throws IOException {
        Path member = dir.resolve(ID).resolve("n1");
        List<Entry> entries = sample(1000);
        BackupManifest written = write(member, entries, 4096);

        assertThat(written.files().size()).isGreaterThan(2);
        assertThat(written.files().get(0).name()).isEqualTo("records-000000.gz");
        assertThat(written.records()).isEqualTo(1000);
        BackupManifest read = BackupManifest.read(member);
        assertThat(read).isEqualTo(written);
        assertThat(read.membership().members().get(0).state()).isEqualTo("normal");
        assertSameEntries(readAll(member), entries);
        assertThat(Files.readString(member.resolve("manifest.json"))).contains("\"format\": 1", "\"sha256\"");
    }

    @Test
    void anEmptyStoreGivesAManifestWithoutFiles() throws IOException {
        Path member = dir.resolve("n1");
        BackupManifest m = write(member, List.of(), BackupFileWriter.FILE_LIMIT);
        assertThat(m.files()).isEmpty();
        assertThat(readAll(member)).isEmpty();
    }

    @Test
    void aFlippedByteIsCaughtNamingTheFile() throws IOException {
        Path member = dir.resolve("n1");
        BackupManifest m = write(member, sample(500), 4096);
        Path second = member.resolve(m.files().get(1).name());
        try (RandomAccessFile f = new RandomAccessFile(second.toFile(), "rw")) {
            f.seek(f.length() / 2);
            int b = f.read();
            f.seek(f.length() / 2);
            f.write(b ^ 0x01);
        }
        assertThatThrownBy(() -> BackupManifest.verify(member))
                .isInstanceOf(BackupManifest.DamagedException.class)
                .hasMessageContaining(second.toString())
                .satisfies(e -> assertThat(((BackupManifest.DamagedException) e).file()).isEqualTo(second));
    }

    @Test
    void aTruncatedFileIsCaughtNamingTheFile() throws IOException {
        Path member = dir.resolve("n1");
        BackupManifest m = write(member, sample(500), 4096);
        Path first = member.resolve(m.files().get(0).name());
        try (RandomAccessFile f = new RandomAccessFile(first.toFile(), "rw")) {
            f.setLength(f.length() - 10);
        }
        assertThatThrownBy(() -> BackupManifest.verify(member)).hasMessageContaining(first.toString());
        assertThatThrownBy(() -> {
            try (BackupFileReader r = BackupFileReader.open(first)) {
                while (r.next() != null) {
                    // read to the end
                }
            }
        }).isInstanceOf(IOException.class).hasMessageContaining(first.toString());
    }

    @Test
    void aMissingFileOrManifestIsCaughtNamingIt() throws IOException {
        Path member = dir.resolve("n1");
        BackupManifest m = write(member, sample(500), 4096);
        Path last = member.resolve(m.files().get(m.files().size() - 1).name());
        Files.delete(last);
        assertThatThrownBy(() -> BackupManifest.verify(member)).hasMessageContaining(last.toString());
        Files.delete(member.resolve("manifest.json"));
        assertThatThrownBy(() -> BackupManifest.verify(member))
                .hasMessageContaining(member.resolve("manifest.json").toString());
    }

    @Test
    void aManifestNamingAFileOutsideItsFolderIsRefused() throws IOException {
        Path member = dir.resolve("n1");
        write(member, sample(10), 4096);
        Path manifest = member.resolve("manifest.json");
        Files.writeString(manifest, Files.readString(manifest).replace("records-000000.gz", "../../etc/passwd"));
        assertThatThrownBy(() -> BackupManifest.verify(member)).hasMessageContaining("manifest.json");
    }

    @Test
    void backupIdsAreSortableFolderNames() {
        String id = BackupManifest.newId(Instant.parse("2026-12-07T11:22:33Z"));
        assertThat(id).startsWith("20261207-112233-");
        assertThat(BackupManifest.isBackupId(id)).isTrue();
        assertThat(BackupManifest.isBackupId("../x")).isFalse();
        assertThat(BackupManifest.isBackupId("20261207-112233-0A1B2C")).isFalse();
    }
}
