package io.kvorum.node.admin;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.client.placement.ClusterView;
import io.kvorum.node.backup.BackupFileWriter;
import io.kvorum.node.backup.BackupManifest;
import io.kvorum.node.model.Entry;
import io.kvorum.node.model.Record;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The restore's merge of member folders: key order, each key once, its newest version. */
class MergedRecordsTest {

    @TempDir
    Path tmp;

    private static Record value(long timestamp, String writer, String value) {
        return Record.value(timestamp, writer, value.getBytes(UTF_8), Record.NEVER_EXPIRES);
    }

    @Test
    void eachKeyComesOnceWithItsNewestVersionInAscendingKeyOrder() throws Exception {
        Map<String, Record> n1 = new TreeMap<>(Map.of("a", value(10, "n1", "a1"), "b", value(30, "n1", "b-newest"),
                "d", value(10, "n1", "d")));
        Map<String, Record> n2 = new TreeMap<>(Map.of("a", value(20, "n2", "a-newest"), "b", value(20, "n2", "b2"),
                "c", Record.tombstone(40, "n2")));
        Map<String, Record> n3 = new TreeMap<>(Map.of("c", value(30, "n3", "c-older-than-the-delete"),
                "e", value(10, "n3", "e")));
        // Small files: the members' keys are spread over several files each.
        List<RestoreCommand.Member> members = List.of(member("n1", n1, 64), member("n2", n2, 64), member("n3", n3, 64));

        Map<String, Record> merged = new LinkedHashMap<>();
        try (MergedRecords records = new MergedRecords(members)) {
            for (Entry e = records.next(); e != null; e = records.next()) {
                assertThat(merged.put(new String(e.key(), UTF_8), e.record())).as("a key came twice").isNull();
            }
            assertThat(records.read()).as("every member's copy was read").isEqualTo(8);
        }
        assertThat(merged.keySet()).containsExactly("a", "b", "c", "d", "e");
        assertThat(new String(merged.get("a").value(), UTF_8)).isEqualTo("a-newest");
        assertThat(new String(merged.get("b").value(), UTF_8)).isEqualTo("b-newest");
        assertThat(merged.get("c").tombstone()).as("the newer delete wins over an older value").isTrue();
        assertThat(new String(merged.get("e").value(), UTF_8)).isEqualTo("e");
    }

    @Test
    void aFolderWhoseKeysDoNotAscendStopsTheMergeNamingItsFile() throws Exception {
        Path dir = tmp.resolve("n1");
        List<BackupManifest.FileEntry> files;
        try (BackupFileWriter writer = new BackupFileWriter(dir)) {
            writer.write("b".getBytes(UTF_8), value(1, "n1", "b"));
            writer.write("a".getBytes(UTF_8), value(1, "n1", "a"));
            files = writer.finish();
        }
        RestoreCommand.Member member = new RestoreCommand.Member(dir, manifest("n1", files));
        try (MergedRecords records = new MergedRecords(List.of(member))) {
            // The merge reads each folder one record ahead: taking "b" meets "a".
            assertThatThrownBy(records::next).isInstanceOf(IOException.class)
                    .hasMessageContaining(dir.resolve(BackupFileWriter.fileName(0)).toString())
                    .hasMessageContaining("keys out of order");
        }
    }

    private RestoreCommand.Member member(String node, Map<String, Record> records, long fileBytes) throws IOException {
        RestoreCommandTest.writeMember(tmp, node, records, fileBytes);
        return new RestoreCommand.Member(tmp.resolve(node), BackupManifest.verify(tmp.resolve(node)));
    }

    private static BackupManifest manifest(String node, List<BackupManifest.FileEntry> files) {
        Instant now = Instant.now();
        return BackupManifest.of(RestoreCommandTest.BACKUP_ID, node, "kvorum", now, now,
                new BackupManifest.Membership(1, List.of(new ClusterView.Member(node, "127.0.0.1", 8080, 9080, "normal"))),
                new ArrayList<>(files));
    }
}
